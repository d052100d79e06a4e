package adapters

import "net/url"

type demonicscans struct{ asurascans }
type comix struct{ asurascans }
type kagane struct{ asurascans }
type novelfull struct{ asurascans }
type lightnovelworld struct{ asurascans }

var _ = url.Parse
