package backup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/migrations"
	"github.com/mangabookmark/mangabookmark/store/localpg"
)

// tocEntry is one line of `pg_restore -l`: "ID; CATALOG OID DESC SCHEMA
// TAG OWNER". Line is kept as written: a -L list names entries by it.
type tocEntry struct {
	line   string
	desc   string
	schema string
	rest   string // the tag, then the owner
}

// ourKinds are the kinds of entry pg_dump writes for what our migrations
// make, longest first (a kind may be a prefix of another). Anything else in
// a dump (a role, a view, a rule, a cast, an event trigger, a language) was
// made by hand, and restore refuses it.
var ourKinds = []string{"SEQUENCE OWNED BY", "SEQUENCE SET", "FK CONSTRAINT", "TABLE DATA",
	"CONSTRAINT", "EXTENSION", "SEQUENCE", "FUNCTION", "TRIGGER", "COMMENT", "DEFAULT", "TABLE", "INDEX"}

var tocLine = regexp.MustCompile(`^[0-9]+; [0-9]+ [0-9]+ (.*)$`)

// listTOC reads the dump's table of contents without running any of it,
// and refuses an entry of a kind our migrations never make, or outside our
// schema.
func listTOC(ctx context.Context, dump string) ([]tocEntry, error) {
	out, err := pgRestore(ctx, "--list", dump)
	if err != nil {
		return nil, err
	}
	var toc []tocEntry
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\n")
		if line == "" || strings.HasPrefix(line, ";") {
			continue
		}
		m := tocLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("the backup's database dump lists an entry restore cannot read: %.60q", line)
		}
		e, ok := parseEntry(line, m[1])
		if !ok {
			return nil, RefusedError{fmt.Sprintf("The backup's database dump holds %.60q, which our migrations never make, so restore will not run it: restore only a file `mangabookmark backup` wrote.", m[1])}
		}
		toc = append(toc, e)
	}
	return toc, nil
}

func parseEntry(line, s string) (tocEntry, bool) {
	for _, kind := range ourKinds {
		rest, ok := strings.CutPrefix(s, kind+" ")
		if !ok {
			continue
		}
		schema, rest, ok := strings.Cut(rest, " ")
		if !ok || (schema != "public" && schema != "-") || (schema == "-") != (kind == "EXTENSION") && kind != "COMMENT" {
			return tocEntry{}, false
		}
		return tocEntry{line: line, desc: kind, schema: schema, rest: strings.TrimSpace(rest)}, true
	}
	return tocEntry{}, false
}

// ourObjects names, as pg_dump's table of contents does ("KIND SCHEMA
// TAG"), every object in the database that our migrations made: the
// schema was empty before them (refuseDatabase), and they ran in this
// transaction.
const ourObjects = `
SELECT 'EXTENSION - ' || extname FROM pg_extension WHERE extname <> 'plpgsql'
UNION ALL SELECT 'COMMENT - EXTENSION ' || extname FROM pg_extension WHERE extname <> 'plpgsql'
UNION ALL SELECT 'FUNCTION public ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
  FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
UNION ALL SELECT k.kind || ' public ' || c.relname FROM pg_class c
  JOIN (VALUES ('r', 'TABLE'), ('r', 'TABLE DATA'), ('S', 'SEQUENCE'), ('S', 'SEQUENCE OWNED BY'),
               ('S', 'SEQUENCE SET'), ('i', 'INDEX')) k(relkind, kind) ON k.relkind = c.relkind::text
  WHERE c.relnamespace = 'public'::regnamespace
UNION ALL SELECT 'DEFAULT public ' || c.relname || ' ' || a.attname FROM pg_attrdef d
  JOIN pg_class c ON c.oid = d.adrelid JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
  WHERE c.relnamespace = 'public'::regnamespace
UNION ALL SELECT CASE WHEN k.contype = 'f' THEN 'FK CONSTRAINT' ELSE 'CONSTRAINT' END || ' public ' || c.relname || ' ' || k.conname
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid WHERE c.relnamespace = 'public'::regnamespace
UNION ALL SELECT 'TRIGGER public ' || c.relname || ' ' || t.tgname FROM pg_trigger t
  JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace`

// checkTOC refuses a dump listing any object our migrations, run up to the
// dump's version, did not make: a function, a trigger or a table of the
// dump's own. None of the dump's definitions is ever run (the schema is
// our migrations'), so this refusal is the owner's warning that the file
// was edited, and it comes before a single row is written.
func checkTOC(ctx context.Context, tx pgx.Tx, toc []tocEntry) error {
	rows, err := tx.Query(ctx, ourObjects)
	if err != nil {
		return fmt.Errorf("restore: list our schema: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("restore: list our schema: %w", err)
	}
	ours := map[string]bool{}
	for _, n := range names {
		ours[n] = true
	}
	for _, e := range toc {
		if !namedIn(ours, e.desc+" "+e.schema+" "+e.rest) {
			return RefusedError{fmt.Sprintf("The backup's database dump holds %s %s %.60s, which our migrations did not make, so restore will not run it: restore only a file `mangabookmark backup` wrote.", e.desc, e.schema, e.rest)}
		}
	}
	return nil
}

// namedIn: s is one of ours, followed by its owner's name (or by none).
func namedIn(ours map[string]bool, s string) bool {
	for i := len(s); i > 0; i = strings.LastIndexByte(s[:i], ' ') {
		if ours[s[:i]] {
			return true
		}
	}
	return false
}

// dumpVersion reads the migration the dump's rows were written under from
// its schema_migrations row, as data, without running anything.
func dumpVersion(ctx context.Context, dump string, toc []tocEntry) (uint, error) {
	i := slices.IndexFunc(toc, func(e tocEntry) bool {
		return e.desc == "TABLE DATA" && strings.HasPrefix(e.rest, "schema_migrations ")
	})
	if i < 0 {
		return 0, RefusedError{"The backup's database dump holds no schema_migrations rows, so it is not a mangabookmark database: restore only a file `mangabookmark backup` wrote."}
	}
	var row []byte
	err := eachStatement(ctx, dump, []tocEntry{toc[i]}, func(table string, _ []string, data io.Reader) error {
		var err error
		row, err = io.ReadAll(io.LimitReader(data, 256))
		return err
	}, nil)
	if err != nil {
		return 0, err
	}
	v, dirty, _ := strings.Cut(strings.TrimSpace(string(row)), "\t")
	n, err := strconv.ParseUint(v, 10, 32)
	newest := newestMigration()
	switch {
	case err != nil || dirty != "f" || strings.Contains(dirty, "\n"):
		return 0, RefusedError{fmt.Sprintf("The backup's schema_migrations row is %.40q, not one clean migration, so restore will not run it.", row)}
	case uint(n) > newest:
		return 0, RefusedError{fmt.Sprintf("The backup was made at migration %d and this version knows %d at most: restore it with the newer mangabookmark that made it.", n, newest)}
	}
	return uint(n), nil
}

// upMigrations are the embedded migrations, by number.
func upMigrations() map[uint]string {
	files, _ := fs.Glob(migrations.FS, "*.up.sql")
	ups := map[uint]string{}
	for _, f := range files {
		n, err := strconv.ParseUint(strings.SplitN(f, "_", 2)[0], 10, 32)
		if err == nil {
			ups[uint(n)] = f
		}
	}
	return ups
}

func newestMigration() uint {
	var newest uint
	for n := range upMigrations() {
		newest = max(newest, n)
	}
	return newest
}

// migrateTo applies our migrations up to version inside tx and records it
// where golang-migrate keeps it (store.Migrate carries on from there):
// inside the restore's transaction, so a refusal leaves the database
// empty. Every migration is plain transactional SQL.
func migrateTo(ctx context.Context, tx pgx.Tx, version uint) error {
	ups := upMigrations()
	nums := make([]uint, 0, len(ups))
	for n := range ups {
		if n <= version {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	if len(nums) == 0 || nums[len(nums)-1] != version {
		return RefusedError{fmt.Sprintf("The backup was made at migration %d, which this version does not have.", version)}
	}
	for _, n := range nums {
		sql, err := fs.ReadFile(migrations.FS, ups[n])
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			return fmt.Errorf("restore: migration %s: %w", ups[n], err)
		}
	}
	_, err := tx.Exec(ctx, `CREATE TABLE schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL)`)
	if err == nil {
		_, err = tx.Exec(ctx, `INSERT INTO schema_migrations (version, dirty) VALUES ($1, false)`, int64(version))
	}
	return err
}

// pgRestore runs pg_restore, which reads the dump and connects nowhere,
// and returns what it printed.
func pgRestore(ctx context.Context, args ...string) ([]byte, error) {
	bin, err := localpg.FindClient("pg_restore")
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("the backup's database dump cannot be read: pg_restore: %w: %s", err, lastLines(errOut.String()))
	}
	return out.Bytes(), nil
}
