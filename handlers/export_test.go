package handlers_test

import "golang.org/x/oauth2"

func oauthEndpoint(base string) oauth2.Endpoint {
	return oauth2.Endpoint{AuthURL: base + "/authorize", TokenURL: base + "/token", AuthStyle: oauth2.AuthStyleInParams}
}
