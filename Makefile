# mangabookmark — every target is a line or two you can read.
GO ?= go
NODE ?= node

.PHONY: run dev link sidecar test generate check-generated bench bench-freshness bench-go demo lint fuzz deb

# run and demo build the binary and run it, not `go run`: the go command
# exits 1 after any Ctrl-C, whatever the program's own exit status.
BIN ?= ./bin/mangabookmark

run: ## the server with its database (embedded PostgreSQL when DATABASE_URL is unset); Ctrl-C stops it cleanly
	$(GO) build -o $(BIN) ./cmd/mangabookmark
	$(BIN) serve

# make dev serves on DEV_LISTEN behind templ's proxy on DEV_PORT, which
# reloads the browser after each change; open http://127.0.0.1:$(DEV_PORT).
DEV_LISTEN ?= 127.0.0.1:8080
DEV_PORT ?= 7331

dev: ## change the views live: templ regenerates on save, dev/serve.sh rebuilds and restarts the server (embedded PostgreSQL when DATABASE_URL is unset), the browser reloads; Ctrl-C stops it all
	@rm -f $(BIN).pid; trap : INT TERM; LISTEN_ADDR=$(DEV_LISTEN) PUBLIC_BASE_URL=http://127.0.0.1:$(DEV_PORT) BIN=$(BIN) GO=$(GO) \
	$(GO) tool templ generate --watch --proxy=http://$(DEV_LISTEN) --proxyport=$(DEV_PORT) --open-browser=false --cmd='sh dev/serve.sh'; \
	while kill -0 "$$(cat $(BIN).pid 2>/dev/null)" 2>/dev/null; do sleep 0.2; done

link: ## a fresh owner sign-in link for the running server, on the address it recorded at start
	$(GO) build -o $(BIN) ./cmd/mangabookmark
	$(BIN) link

SIDECAR_PORT ?= 9222

sidecar: ## Debian's headless Chromium as the browser sidecar; the server reads it with BROWSER_WS_URL=ws://127.0.0.1:$(SIDECAR_PORT)
	chromium --headless --no-sandbox --disable-gpu --no-first-run --remote-debugging-address=127.0.0.1 --remote-debugging-port=$(SIDECAR_PORT) --user-data-dir=var/sidecar --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage about:blank

test: check-generated ## the whole suite on real PostgreSQL, fuzz seed corpora included, and the userscript's tests
	$(NODE) --test static/userscript/*.test.js
	$(GO) run ./cmd/mangabookmark testdb -- $(GO) test -race -count=1 -timeout 20m ./...

generate: ## regenerate templ output
	$(GO) tool templ generate

check-generated: ## fail when the committed _templ.go files are stale
	@before=$$(cat $$(find components -name '*_templ.go' | sort) | sha256sum); \
	$(GO) tool templ generate >/dev/null 2>&1; \
	after=$$(cat $$(find components -name '*_templ.go' | sort) | sha256sum); \
	if [ "$$before" != "$$after" ]; then echo "templ output was stale: regenerated it; review and commit the _templ.go files"; exit 1; fi

N ?= 50000

bench: ## the owner's pages at N Series against the real server, one table (make bench N=1000000); numbers only, never timed tests
	$(GO) run ./cmd/mangabookmark testdb -- $(GO) run ./cmd/mangabookmark bench -n $(N)

FRESHNESS_N ?= 1000000

bench-freshness: ## release-to-detection delay, round-robin against the scheduler, on a virtual clock (make bench-freshness FRESHNESS_N=50000); no database
	$(GO) run ./cmd/mangabookmark bench-freshness -n $(FRESHNESS_N)

bench-go: ## the Go benchmarks (parsing, a pass, the list queries, the conditions)
	$(GO) run ./cmd/mangabookmark testdb -- $(GO) test -run '^$$' -bench . -benchmem ./...

demo: ## six local stand-in Sites, a webhook sink, and the server polling them
	$(GO) build -o $(BIN) ./cmd/mangabookmark
	$(BIN) demo

lint: ## gofmt and go vet over the tree; .ci/run runs it before the tests
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

fuzz: ## longer fuzzing of one target: make fuzz PKG=./adapters FUZZ=FuzzParseAsurascans
	$(GO) test -run '^$$' -fuzz '$(FUZZ)' -fuzztime 60s $(PKG)

# Release builds (issue 25): the version, commit and date come from git, the
# date from the commit rather than the clock, so two builds of one commit are
# byte-identical. Outside a git checkout the version is "dev".
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE ?= $(shell git log -1 --format=%cI 2>/dev/null || echo 1970-01-01T00:00:00Z)
VERSION_PKG = github.com/mangabookmark/mangabookmark/internal/version
LDFLAGS = -s -w -buildid= -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT) -X $(VERSION_PKG).date=$(DATE)
# build-linux ARCH OUT: the static release binary (no cgo: it runs FROM scratch).
build-linux = CGO_ENABLED=0 GOOS=linux GOARCH=$(1) $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(2) ./cmd/mangabookmark

# nfpm is run at a pinned version, not kept as a `tool` line in go.mod like
# templ: tools share the module graph, so nfpm's would add ~75 lines to
# go.mod and ~175 to go.sum, and raise the go line, x/net and x/text under
# the server's own build. `go run pkg@version` keeps go.mod as it is and
# still checks the download against the checksum database.
NFPM ?= $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.48.0
# packaging/deb-version turns VERSION into a version dpkg sorts rightly.
DEB_VERSION ?= $(shell packaging/deb-version $(VERSION) $(COMMIT))
# The packages' file times: the commit's, as for the archives.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

deb: ## Debian packages dist/mangabookmark_VERSION_ARCH.deb for amd64 and arm64: the binary, the systemd unit, /etc/mangabookmark/env (packaging/)
	mkdir -p dist
	for arch in amd64 arm64; do \
	  $(call build-linux,$$arch,bin/deb/$$arch/mangabookmark) && \
	  ARCH=$$arch BIN=bin/deb/$$arch/mangabookmark DEB_VERSION=$(DEB_VERSION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
	    $(NFPM) package --config packaging/nfpm.yaml --packager deb --target dist/ || exit 1; \
	done
