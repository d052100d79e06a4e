package handlers

import (
	"net/http"

	"github.com/mangabookmark/mangabookmark/components"
)

func handleHome(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		render(w, r, d.Logger, http.StatusOK, components.HomePage(viewerFrom(r.Context())))
	})
}

func handleNotFound(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, d.Logger, http.StatusNotFound, "There is no page at this address.")
	})
}
