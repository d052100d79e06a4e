package backup

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store/localpg"
)

// loadRows copies the dump's rows into our tables (already made by
// migrateTo, in tx) and sets our sequences where the dump left them. No
// statement of the dump runs: pg_restore only decodes the rows to text, and
// each COPY and setval is ours, naming a table, its columns or a sequence
// that our schema holds. The copy runs as a role that is not a superuser,
// and with our triggers off, as pg_restore loads rows before it makes them:
// the counts the triggers keep are in the rows already.
func loadRows(ctx context.Context, tx pgx.Tx, dump string, toc []tocEntry) error {
	tables, err := ourTables(ctx, tx)
	if err != nil {
		return err
	}
	data, filled := dataEntries(toc, tables)
	for _, t := range tables.order {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+pgx.Identifier{"public", t}.Sanitize()+` DISABLE TRIGGER USER`); err != nil {
			return err
		}
	}
	// Some migrations seed rows (the Lanes); the dump's rows replace them.
	if len(filled) > 0 {
		if _, err := tx.Exec(ctx, `TRUNCATE `+strings.Join(filled, ", ")); err != nil {
			return err
		}
	}
	drop, err := asPlainRole(ctx, tx)
	if err != nil {
		return err
	}
	err = eachStatement(ctx, dump, data, func(table string, cols []string, rows io.Reader) error {
		return copyRows(ctx, tx, tables, table, cols, rows)
	}, func(seq string, value int64, called bool) error {
		if !slices.Contains(tables.sequences, seq) {
			return RefusedError{fmt.Sprintf("The backup's database dump sets a sequence %.40q our schema does not have, so restore will not run it.", seq)}
		}
		_, err := tx.Exec(ctx, `SELECT pg_catalog.setval($1::regclass, $2, $3)`, pgx.Identifier{"public", seq}.Sanitize(), value, called)
		return err
	})
	if err != nil {
		return err
	}
	if err := drop(); err != nil {
		return err
	}
	for _, t := range tables.order {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+pgx.Identifier{"public", t}.Sanitize()+` ENABLE TRIGGER USER`); err != nil {
			return err
		}
	}
	return nil
}

// schema is our tables (in an order where each comes after the tables its
// foreign keys name), their columns, and our sequences.
type schema struct {
	order     []string
	columns   map[string][]string
	sequences []string
}

func ourTables(ctx context.Context, tx pgx.Tx) (schema, error) {
	s := schema{columns: map[string][]string{}}
	rows, err := tx.Query(ctx, `SELECT c.relname, a.attname FROM pg_class c
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' ORDER BY c.relname, a.attnum`)
	if err != nil {
		return s, err
	}
	var table, col string
	if _, err := pgx.ForEachRow(rows, []any{&table, &col}, func() error {
		s.columns[table] = append(s.columns[table], col)
		return nil
	}); err != nil {
		return s, err
	}
	rows, err = tx.Query(ctx, `SELECT c.relname, p.relname FROM pg_constraint k
		JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
		WHERE k.contype = 'f' AND c.relnamespace = 'public'::regnamespace`)
	if err != nil {
		return s, err
	}
	refs := map[string][]string{}
	var child, parent string
	if _, err := pgx.ForEachRow(rows, []any{&child, &parent}, func() error {
		refs[child] = append(refs[child], parent)
		return nil
	}); err != nil {
		return s, err
	}
	s.order = referencedFirst(s.columns, refs)
	rows, err = tx.Query(ctx, `SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'S'`)
	if err != nil {
		return s, err
	}
	s.sequences, err = pgx.CollectRows(rows, pgx.RowTo[string])
	return s, err
}

// referencedFirst orders the tables so that a table comes after every
// other table its foreign keys name: a row is copied after the row it
// references, with every check on.
func referencedFirst(columns map[string][]string, refs map[string][]string) []string {
	var order []string
	placed := map[string]bool{}
	var place func(t string, depth int)
	place = func(t string, depth int) {
		if placed[t] || depth > len(columns) {
			return
		}
		for _, p := range refs[t] {
			if p != t {
				place(p, depth+1)
			}
		}
		if !placed[t] {
			placed[t] = true
			order = append(order, t)
		}
	}
	names := make([]string, 0, len(columns))
	for t := range columns {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		place(t, 0)
	}
	return order
}

// dataEntries are the dump's rows to copy, referenced tables first, then
// its sequence values, and the tables they fill (quoted). schema_migrations
// is not among them: migrateTo wrote its row from the same number.
func dataEntries(toc []tocEntry, s schema) (data []tocEntry, filled []string) {
	rank := func(e tocEntry) int {
		if e.desc == "SEQUENCE SET" {
			return len(s.order)
		}
		name, _, _ := strings.Cut(e.rest, " ")
		return slices.Index(s.order, name)
	}
	for _, e := range toc {
		if (e.desc == "TABLE DATA" && !strings.HasPrefix(e.rest, "schema_migrations ")) || e.desc == "SEQUENCE SET" {
			data = append(data, e)
		}
		if name, _, _ := strings.Cut(e.rest, " "); e.desc == "TABLE DATA" && name != "schema_migrations" && slices.Contains(s.order, name) {
			filled = append(filled, pgx.Identifier{"public", name}.Sanitize())
		}
	}
	slices.SortStableFunc(data, func(a, b tocEntry) int { return rank(a) - rank(b) })
	return data, filled
}

// copyRows copies rows into table's cols with a COPY of ours: the table
// and every column must be our schema's.
func copyRows(ctx context.Context, tx pgx.Tx, s schema, table string, cols []string, rows io.Reader) error {
	have, ok := s.columns[table]
	if !ok || table == "schema_migrations" {
		return RefusedError{fmt.Sprintf("The backup's database dump holds rows for a table %.40q our schema does not have, so restore will not load them.", table)}
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		if !slices.Contains(have, c) {
			return RefusedError{fmt.Sprintf("The backup's database dump holds a column %.40q that our table %s does not have, so restore will not load it.", c, table)}
		}
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	sql := `COPY ` + pgx.Identifier{"public", table}.Sanitize() + ` (` + strings.Join(quoted, ", ") + `) FROM STDIN`
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, rows, sql); err != nil {
		return fmt.Errorf("restore: the rows of %s: %w", table, err)
	}
	return nil
}

// asPlainRole makes the rest of tx run as a role that is not a superuser
// when the connection's role is one: a role made for this restore, allowed
// to add rows to our tables and set our sequences, and nothing else. drop
// ends it; a failed restore's rollback ends it too.
func asPlainRole(ctx context.Context, tx pgx.Tx) (drop func() error, err error) {
	var super bool
	if err := tx.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil {
		return nil, err
	}
	if !super {
		return func() error { return nil }, nil
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	role := pgx.Identifier{"mangabookmark_restore_" + hex.EncodeToString(b)}.Sanitize()
	for _, sql := range []string{
		`CREATE ROLE ` + role + ` NOLOGIN NOSUPERUSER NOINHERIT NOCREATEDB NOCREATEROLE`,
		`GRANT USAGE ON SCHEMA public TO ` + role,
		`GRANT INSERT ON ALL TABLES IN SCHEMA public TO ` + role,
		`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO ` + role,
		`SET LOCAL ROLE ` + role,
	} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return nil, fmt.Errorf("restore: a role that is not a superuser: %w", err)
		}
	}
	return func() error {
		for _, sql := range []string{`RESET ROLE`, `DROP OWNED BY ` + role, `DROP ROLE ` + role} {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// eachStatement has pg_restore decode the entries' rows and sequence values
// to text, connecting nowhere, and hands each COPY to onCopy and each
// setval to onSetval. The text is read, never run: a line that is neither,
// nor a comment or a session setting, is refused.
func eachStatement(ctx context.Context, dump string, entries []tocEntry,
	onCopy func(table string, cols []string, rows io.Reader) error,
	onSetval func(seq string, value int64, called bool) error) error {
	list, err := os.CreateTemp(filepath.Dir(dump), "list-")
	if err != nil {
		return err
	}
	defer os.Remove(list.Name())
	for _, e := range entries {
		fmt.Fprintln(list, e.line)
	}
	if err := list.Close(); err != nil {
		return err
	}
	bin, err := localpg.FindClient("pg_restore")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--data-only", "--use-list="+list.Name(), "--file=-", dump)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		return err
	}
	err = readStatements(bufio.NewReaderSize(out, 64<<10), onCopy, onSetval)
	if err != nil {
		cancel()
		_ = cmd.Wait()
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("the backup's database dump cannot be read: pg_restore: %w: %s", err, lastLines(errOut.String()))
	}
	return nil
}

var (
	copyLine   = regexp.MustCompile(`^COPY public\.("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*) \(((?:"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)(?:, (?:"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*))*)\) FROM stdin;$`)
	identRe    = regexp.MustCompile(`"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*`)
	setvalLine = regexp.MustCompile(`^SELECT pg_catalog\.setval\('public\.("(?:[^"']|"")+"|[a-z_][a-z0-9_$]*)', (-?[0-9]+), (true|false)\);$`)
	ignored    = []string{"--", "SET ", `SELECT pg_catalog.set_config('search_path', '', false);`, `\restrict `, `\unrestrict `}
)

func readStatements(br *bufio.Reader, onCopy func(string, []string, io.Reader) error, onSetval func(string, int64, bool) error) error {
	for {
		line, err := br.ReadString('\n')
		if errors.Is(err, io.EOF) && line == "" {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "SET client_encoding = ") && line != "SET client_encoding = 'UTF8';":
			return RefusedError{fmt.Sprintf("The backup's database dump is not UTF8 (%.40s), so restore will not load it.", line)}
		case line == "" || slices.ContainsFunc(ignored, func(p string) bool { return strings.HasPrefix(line, p) }):
		case copyLine.MatchString(line):
			m := copyLine.FindStringSubmatch(line)
			var cols []string
			for _, c := range identRe.FindAllString(m[2], -1) {
				cols = append(cols, unquote(c))
			}
			rows := &copyData{br: br}
			if err := onCopy(unquote(m[1]), cols, rows); err != nil {
				return err
			}
			if _, err := io.Copy(io.Discard, rows); err != nil {
				return err
			}
		case setvalLine.MatchString(line) && onSetval != nil:
			m := setvalLine.FindStringSubmatch(line)
			v, err := strconv.ParseInt(m[2], 10, 64)
			if err != nil {
				return RefusedError{fmt.Sprintf("The backup's database dump sets a sequence to %.40q, not a number.", m[2])}
			}
			if err := onSetval(unquote(m[1]), v, m[3] == "true"); err != nil {
				return err
			}
		default:
			return RefusedError{fmt.Sprintf("The backup's database dump holds %.60q, a statement restore does not run: restore only a file `mangabookmark backup` wrote.", line)}
		}
	}
}

func unquote(id string) string {
	if strings.HasPrefix(id, `"`) {
		return strings.ReplaceAll(id[1:len(id)-1], `""`, `"`)
	}
	return id
}

// copyData reads one COPY's rows, up to the line `\.` that ends them,
// without holding a whole row in memory.
type copyData struct {
	br      *bufio.Reader
	buf     []byte
	midLine bool
	done    bool
}

func (c *copyData) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if len(c.buf) == 0 {
		line, err := c.br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			c.midLine = true
		case err != nil:
			return 0, errors.New("the backup's database dump ends inside a table's rows")
		case !c.midLine && string(line) == "\\.\n":
			c.done = true
			return 0, io.EOF
		default:
			c.midLine = false
		}
		c.buf = line
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}
