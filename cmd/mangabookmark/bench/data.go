package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mangabookmark/mangabookmark/word"
)

// benchData is the data set of `mangabookmark bench`: n Series on the six
// Sites, about 10% with a failure row of mixed words and ages, about 5%
// Finished, Bookmarks from 200 Readers, 14 days of pass log, a day of
// Arrivals (n/7) and eight days of the failing history. It is
// generated inside PostgreSQL (generate_series) from a fixed seed, so two
// runs at one size hold the same rows, and it goes in through the tables
// the server writes (failure rows through poll_failures), so every trigger
// keeps its copies and tallies as in production.
func benchData(n int, now time.Time) []string {
	const bookmarked = `(i::bigint * 2654435761 %% 100) < 70`
	// Times are timestamptz (docs/adr/0015): now, to the millisecond, and
	// ages drawn in milliseconds as before, so a seed draws the same rows.
	at := "timestamptz '" + now.UTC().Truncate(time.Millisecond).Format("2006-01-02 15:04:05.000Z07:00") + "'"
	const ms = `interval '1 millisecond'`
	const hour, day = 3_600_000, 86_400_000
	return []string{
		// One backend draws every random(): no parallel workers, one seed.
		`SET max_parallel_workers_per_gather = 0`,
		`SELECT setseed(0.15)`,
		`INSERT INTO readers (discord_id, name, created_at)
		 SELECT 'reader' || r, 'Reader ' || r, timestamptz 'epoch' FROM generate_series(1, 200) r`,
		fmt.Sprintf(`INSERT INTO series (site, series_id, url, title, cover_url, kind, latest_chapter_num,
		        latest_raised_by, checked_at, finished_at, site_completed_at, created_at, bookmark_count)
		 SELECT site, 's' || lpad(i::text, 7, '0'),
		        CASE WHEN random() < 0.01 THEN '' ELSE 'https://' || host || '/series/s' || i END,
		        'Series ' || i, 'https://' || host || '/covers/' || i || '.webp', kind,
		        CASE WHEN random() < 0.03 THEN NULL ELSE (1 + floor(random() * 300))::numeric END,
		        CASE WHEN random() < 0.02 THEN 'reader' || (1 + floor(random() * 200))::int END,
		        CASE WHEN random() < 0.01 THEN NULL
		             WHEN random() < 0.03 THEN %[1]s - (13 * %[2]d::bigint + floor(random() * 30 * %[3]d)::bigint) * %[5]s
		             ELSE %[1]s - floor(random() * 50 * 60000)::bigint * %[5]s END,
		        CASE WHEN random() < 0.05 THEN %[1]s - floor(random() * 365 * %[3]d)::bigint * %[5]s END,
		        CASE WHEN random() < 0.02 THEN %[1]s - floor(random() * 30 * %[3]d)::bigint * %[5]s END,
		        %[1]s - 400 * %[3]d::bigint * %[5]s, CASE WHEN `+bookmarked+` THEN 1 ELSE 0 END
		   FROM generate_series(1, %[4]d) i,
		        LATERAL (SELECT (ARRAY[`+sqlList(word.Sites)+`])[i %% 6 + 1] AS site,
		                        (ARRAY['asuracomic.net','demonicscans.org','comix.to','kagane.org','novelfull.com','lightnovelworld.com'])[i %% 6 + 1] AS host,
		                        CASE WHEN i %% 6 >= 4 THEN `+word.Novel.SQL()+` ELSE `+word.Manga.SQL()+` END AS kind) k`, at, hour, day, n, ms),
		// Ages: squared, so most runs are days or weeks old and some are
		// younger than the window (in no list yet).
		fmt.Sprintf(`INSERT INTO poll_failures (site, series_id, outcome, failing_since)
		 SELECT site, series_id, (ARRAY[`+sqlList([]word.Outcome{word.NoChapter, word.Errors, word.NotFound, word.Unfetchable})+`])[1 + floor(random() * 4)::int],
		        %s - floor(random() * random() * 90 * %d)::bigint * %s
		   FROM series WHERE random() < 0.10`, at, day, ms),
		// Seven in ten Series have one Bookmark, of a Reader picked from i. The
		// Series were written with the count the trigger would have kept, so
		// the trigger steps aside for this one statement: replaying it would
		// rewrite every Series row once more.
		`ALTER TABLE bookmarks DISABLE TRIGGER bookmarks_count`,
		`INSERT INTO bookmarks (reader_id, site, series_id, progress_num, created_at, updated_at)
		 SELECT 'reader' || (1 + substr(series_id, 2)::bigint / 7 % 200), site, series_id, floor(random() * 100)::numeric,
		        timestamptz 'epoch', timestamptz 'epoch'
		   FROM series WHERE bookmark_count = 1`,
		`ALTER TABLE bookmarks ENABLE TRIGGER bookmarks_count`,
		fmt.Sprintf(`INSERT INTO poll_passes (site, started_at, finished_at, due, checked, `+word.OK.Column("")+`, `+word.NoChapter.Column("")+`, `+word.Errors.Column("")+`)
		 SELECT site, t, t + 30000 * %[3]s, 40, 40, 37, 1, 2
		   FROM unnest(ARRAY[`+sqlList(word.Sites)+`]) site,
		        generate_series(%[1]s - 14 * %[2]d::bigint * %[3]s, %[1]s, 600000 * %[3]s) t`, at, day, ms),
		// A day of Arrivals, one new chapter a week for each Series, each
		// noticed up to two hours before its Poll confirmed it: the rows the
		// freshness figures read.
		fmt.Sprintf(`INSERT INTO chapter_arrivals (site, series_id, chapter_num, confirmed_at, noticed_at)
		 SELECT site, series_id, 1, t, t - floor(random() * random() * 2 * %[2]d)::bigint * %[3]s
		   FROM (SELECT site, series_id, %[1]s - floor(random() * %[4]d)::bigint * %[3]s AS t
		           FROM series WHERE random() < 1.0 / 7) a`, at, hour, ms, day),
		// Eight days of the failing history, as the Lanes keep it: every
		// row it ever holds.
		fmt.Sprintf(`INSERT INTO failing_history (site, at, failing)
		 SELECT site, date_trunc('hour', %[1]s) - h * interval '1 hour', 900 + floor(random() * 200)::int
		   FROM unnest(ARRAY[`+sqlList(word.Sites)+`]) site, generate_series(0, 191) h`, at),
		// Every Lane paused: the server then talks to PostgreSQL only for pages.
		fmt.Sprintf(`UPDATE poll_lanes SET paused_until = %s + 365 * %d::bigint * %s`, at, day, ms),
		`VACUUM ANALYZE`,
	}
}

// sqlList is words as the list inside an SQL ARRAY[...]: the bench writes
// the same words the server does (word).
func sqlList[W interface{ SQL() string }](ws []W) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.SQL()
	}
	return strings.Join(out, ",")
}

// loadBenchData runs benchData on the database at url.
func loadBenchData(ctx context.Context, url string, n int, now time.Time) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range benchData(n, now) {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("bench data: %w\n%s", err, q)
		}
	}
	return nil
}
