package handlers_test

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

func chiWalk(r chi.Router, fn func(method, route string)) error {
	return chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		fn(method, route)
		return nil
	})
}
