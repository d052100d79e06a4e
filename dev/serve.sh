#!/bin/sh
# make dev's --cmd: `templ generate --watch` runs this at start and after
# each change that needs a new binary. It builds, then runs `serve`
# (DATABASE_URL unset: the embedded cluster in DATA_DIR) so that both ways
# templ ends a command stop the server cleanly, its cluster stopped and
# DATA_DIR/pg.lock free before the next one starts:
#
# - a restart: templ sends SIGINT and SIGTERM to this script's process
#   group, waits for this script, then SIGKILLs the group. The trap passes
#   SIGTERM to the server and waits for it, so the next `serve` finds the
#   lock free and is not refused.
# - templ's own stop (Ctrl-C on make dev): templ SIGKILLs this script at
#   once, then its group. The server runs in a session of its own (setsid),
#   out of the group's reach, and its parent's death sends it SIGTERM
#   (setpriv --pdeathsig); make dev waits for it ($BIN.pid).
bin=${BIN:-./bin/mangabookmark}
${GO:-go} build -o "$bin" ./cmd/mangabookmark || exit 1
pid=
trap 'if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null; wait "$pid"; fi; exit 0' INT TERM
setpriv --pdeathsig TERM -- setsid "$bin" serve &
pid=$!
echo "$pid" >"$bin.pid"
wait "$pid"
