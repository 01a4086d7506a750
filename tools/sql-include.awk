# Expands `#include "objects/NAME.sql"` lines of hopper's SQL sources (sql/ext/*.sql and
# sql/updates/*.sql) into the named file's text; everything else passes through. Run with
# -v dir=sql. A missing or empty file stops the build.
/^#include "/ {
    file = $2
    gsub(/"/, "", file)
    path = dir "/" file
    lines = 0
    while ((status = (getline line < path)) > 0) {
        print line
        lines++
    }
    if (status < 0 || lines == 0) {
        print "sql-include: cannot read " path " (included from " FILENAME ")" > "/dev/stderr"
        exit 1
    }
    close(path)
    next
}
{ print }
