package handlers

import (
	"net/http"
)

func handleNotFound(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, d.Logger, http.StatusNotFound, "There is no page at this address.")
	})
}
