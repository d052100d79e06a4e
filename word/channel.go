package word

// Channel is one way a Reader hears of a new chapter (CONTEXT.md, Reader
// channel): announcements.channel and the /settings fields.
type Channel string

// The three channels.
const (
	// ChannelDiscord mentions the Reader in the Readers' Discord channel
	// (READERS_WEBHOOK_URL).
	ChannelDiscord Channel = "discord"
	// ChannelPush is Web Push to the browsers the Reader subscribed.
	ChannelPush Channel = "push"
	// ChannelFeed is the Reader's private Atom feed.
	ChannelFeed Channel = "feed"
)

// Channels lists the three.
var Channels = []Channel{ChannelDiscord, ChannelPush, ChannelFeed}
