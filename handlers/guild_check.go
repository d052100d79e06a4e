package handlers

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"golang.org/x/oauth2"

	"github.com/mangabookmark/mangabookmark/store"
)

// The guild re-check (CONTEXT.md, Guild re-check; docs/adr/0020): a Discord
// Reader's membership of the guild is asked again with their OAuth refresh
// token on their first request after GuildCheckEvery, in the request, within
// guildCheckTimeout. Only a definite answer ends anything: Discord listing
// the Reader's servers without the guild, or refusing the refresh token as
// invalid_grant (the Reader revoked the app). An outage, a timeout or any
// other answer leaves the Reader signed in and asks again after
// guildCheckRetry.
const (
	GuildCheckEvery   = 24 * time.Hour
	guildCheckRetry   = time.Hour
	guildCheckTimeout = 3 * time.Second
)

// guildVerdict is what one re-check learned.
type guildVerdict int

const (
	guildUnknown guildVerdict = iota // Discord did not answer plainly: change nothing
	guildMember                      // still a member: the next check in a day
	guildGone                        // left the guild, or revoked the grant
	guildNoGrant                     // no refresh token kept: sign in again
)

// endsSessions: the Reader's sessions were ended by the check.
func (v guildVerdict) endsSessions() bool { return v == guildGone || v == guildNoGrant }

// guildChecker runs the re-check for the session routes and the token API.
type guildChecker struct {
	d      Deps
	oauth  *oauth2.Config
	client *http.Client
}

// newGuildChecker is nil when Discord sign-in is not configured: nobody
// then is a Discord Reader to check.
func newGuildChecker(d Deps, oauth *oauth2.Config, client *http.Client) *guildChecker {
	if oauth == nil {
		return nil
	}
	return &guildChecker{d: d, oauth: oauth, client: client}
}

// check runs a due re-check for the Reader and records what it learned:
// guildGone has signed them out everywhere (sessions and API tokens);
// guildNoGrant has ended their sessions only, so that a Discord sign-in
// keeps a grant (their tokens are not evidence of anything). The owner is
// named by OWNER_DISCORD_ID, not by the guild, and is never checked. A check
// another request already claimed, or a database that did not answer, is
// guildUnknown: the Reader keeps their access.
func (g *guildChecker) check(ctx context.Context, id string) guildVerdict {
	if g == nil || id == g.d.OwnerID {
		return guildUnknown
	}
	log := g.d.Logger
	now := g.d.now()
	sealed, err := g.d.Store.ClaimGuildCheck(ctx, id, now, now.Add(guildCheckRetry))
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			log.Warn("guild re-check: claim failed", "discord_id", id, "err", err)
		}
		return guildUnknown
	}
	verdict, refresh := g.ask(ctx, id, sealed)
	// The verdict is written even when the request's own deadline has
	// passed while Discord answered.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.d.requestTimeout())
	defer cancel()
	switch verdict {
	case guildMember:
		if err := g.d.Store.SaveDiscordGrant(wctx, id, sealGrant(g.d.TokenKey, id, refresh), now.Add(GuildCheckEvery)); err != nil {
			log.Warn("guild re-check: record failed", "discord_id", id, "err", err)
		}
	case guildGone:
		if err := g.d.Store.SignOutEverywhere(wctx, id); err != nil {
			log.Error("guild re-check: sign out failed", "discord_id", id, "err", err)
			return guildUnknown
		}
		log.Info("guild re-check: no longer a member; signed out everywhere", "discord_id", id)
	case guildNoGrant:
		if err := g.d.Store.EndSessionsUngranted(wctx, id); err != nil {
			log.Error("guild re-check: end sessions failed", "discord_id", id, "err", err)
			return guildUnknown
		}
		log.Info("guild re-check: no Discord grant kept; sessions ended to sign in again", "discord_id", id)
	}
	return verdict
}

// ask spends the refresh token for a fresh access token (Discord rotates
// the refresh token: the new one is returned to keep) and lists the
// Reader's servers.
func (g *guildChecker) ask(ctx context.Context, id string, sealed []byte) (guildVerdict, string) {
	log := g.d.Logger
	if len(sealed) == 0 {
		return guildNoGrant, ""
	}
	refresh, err := openGrant(g.d.TokenKey, id, sealed)
	if err != nil {
		log.Warn("guild re-check: kept grant unreadable", "discord_id", id, "err", err)
		return guildNoGrant, ""
	}
	if refresh == "" { // Discord gave no refresh token at sign-in
		return guildNoGrant, ""
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), guildCheckTimeout)
	defer cancel()
	dctx = context.WithValue(dctx, oauth2.HTTPClient, g.client)
	tok, err := g.oauth.TokenSource(dctx, &oauth2.Token{RefreshToken: refresh}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			return guildGone, ""
		}
		log.Warn("guild re-check: Discord did not refresh the grant; asking again later", "discord_id", id, "err", redactOAuthErr(err))
		return guildUnknown, ""
	}
	var guilds []discordGuild
	if err := discordGet(dctx, g.client, g.d.Discord.APIBase, tok, "/users/@me/guilds", &guilds); err != nil {
		log.Warn("guild re-check: Discord did not list the servers; asking again later", "discord_id", id, "err", err)
		return guildUnknown, ""
	}
	if !slices.ContainsFunc(guilds, func(gd discordGuild) bool { return gd.ID == g.d.Discord.GuildID }) {
		return guildGone, ""
	}
	if tok.RefreshToken != "" {
		refresh = tok.RefreshToken
	}
	return guildMember, refresh
}
