/* test_csv.c -- the CSV reader (util/csv.c) and the problem lists on it
 * (tune/problem_list.c), each case one of issue #18's "silent misparse"
 * defects of the old fgets/strtok reader, which this test fails on:
 *  - a line longer than 1023 bytes was split, its tail read as a row (a
 *    long comment ending in something row-like added a row) and later line
 *    numbers were off: here lines of any length, right line numbers;
 *  - an empty cell collapsed and shifted the columns: here it is an error
 *    naming its column;
 *  - 99999999999999999999 became INT64_MAX: here "out of range";
 *  - a blank line in a CRLF file was an error while LF blank lines were
 *    skipped: both are skipped;
 *  - junk after a NUL byte was ignored: a NUL is an error;
 *  - a directory gave "line 1 must be the header": it is named a directory;
 *  - a non-integer cell said "(see header)": the column is named.
 * And the rest of the syntax: quoting (commas and line breaks inside,
 * doubled quotes), stray quotes, text after a closing quote, a bare CR, an
 * unclosed quote, a header in another order, unknown and repeated columns,
 * the optional network and family columns, a directory of lists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "tune/problem_list.h"
#include "util/csv.h"

#define HEADER "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups\n"
#define ROW(name) name ",1,16,12,12,16,3,3,1,1,1,1,1,1,1\n"

static void write_bytes(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

static const char *file_of(const char *name, const char *text) {
    const char *path = test_tmp_path(name);
    write_bytes(path, text, strlen(text));
    return path;
}

/* Reads a list; returns the rows (or -1) and leaves the error in err. */
static int rows_of(const char *path, char *err, size_t cap) {
    struct problem_list list = {0};
    err[0] = '\0';
    const bool ok = problem_list_read(path, &list, err, cap);
    const int n = ok ? list.n : -1;
    problem_list_free(&list);
    return n;
}

/* The raw records of `text`: the field counts joined, or the error. */
static void records(const char *text, size_t len, char *out, size_t cap) {
    FILE *f = fmemopen((void *)text, len, "rb");
    struct csv_reader *r = csv_open_stream(f, "mem");
    char **fields;
    int count, rc;
    long line;
    size_t used = 0;
    out[0] = '\0';
    while ((rc = csv_next(r, &fields, &count, &line)) == 1) {
        used += (size_t)snprintf(out + used, cap - used, "[%ld:", line);
        for (int i = 0; i < count; i++)
            used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? "|" : "", fields[i]);
        used += (size_t)snprintf(out + used, cap - used, "]");
    }
    if (rc < 0)
        snprintf(out + used, cap - used, "ERROR %s", csv_error(r));
    csv_close(r);
    fclose(f);
}

int main(void) {
    test_tmpdir("csv");
    char err[PROBLEM_LIST_ERROR_MAX], got[4096];

    /* the syntax, record by record */
#define RECORDS(lit) records(lit, sizeof lit - 1, got, sizeof got)
    RECORDS("a,b\n\"x,y\",\"q\"\"uote\"\n");
    CHECK(test_contains(got, "[1:a|b][2:x,y|q\"uote]"));
    RECORDS("a\r\n\r\n\nb,\"multi\nline\"\r\nc");
    CHECK(test_contains(got, "[1:a][4:b|multi\nline][6:c]"));
    RECORDS("# comment, with \"quotes\nx,,\n");
    CHECK(test_contains(got, "[2:x||]"));
    RECORDS("a,b\"c\n");
    CHECK(test_contains(got, "ERROR mem line 1, column 2: a quote inside an unquoted field"));
    RECORDS("\"ab\"c\n");
    CHECK(test_contains(got, "ERROR mem line 1, column 1: text after a closing quote"));
    RECORDS("a,\"open\nstill\n");
    CHECK(test_contains(got, "ERROR mem line 1, column 2: a quote opened here is never closed"));
    RECORDS("ab\rc\n");
    CHECK(test_contains(got, "ERROR mem line 1, column 1: a carriage return not followed"));
    RECORDS("ok\nx,y\0junk\n");
    CHECK(test_contains(got, "[1:ok]ERROR mem line 2, column 2: a NUL byte"));

    /* a 5000-byte comment ending in something row-like, then a 3000-byte
     * name: no extra row, and the bad row after them is on line 5 */
    static char text[16384];
    size_t n = (size_t)snprintf(text, sizeof text, "%s# ", HEADER);
    memset(text + n, 'c', 5000), n += 5000;
    n += (size_t)snprintf(text + n, sizeof text - n, "," ROW("fake"));
    n += (size_t)snprintf(text + n, sizeof text - n, ROW("good"));
    n += (size_t)snprintf(text + n, sizeof text - n, "bad,1,16,12,12,16,3,3,1,1,1,1,1,1,x\n");
    write_bytes(test_tmp_path("long.csv"), text, n);
    CHECK(rows_of(test_tmp_path("long.csv"), err, sizeof err) == -1);
    CHECK(test_contains(err, "long.csv line 4, column 15: groups: 'x' is not an integer"));
    n -= 36; /* without the bad row: one problem, not two */
    write_bytes(test_tmp_path("long.csv"), text, n);
    CHECK(rows_of(test_tmp_path("long.csv"), err, sizeof err) == 1);
    /* a name longer than the row struct holds is an error, not a split */
    n = (size_t)snprintf(text, sizeof text, "%s", HEADER);
    memset(text + n, 'n', 3000), n += 3000;
    n += (size_t)snprintf(text + n, sizeof text - n, ",1,16,12,12,16,3,3,1,1,1,1,1,1,1\n");
    write_bytes(test_tmp_path("longname.csv"), text, n);
    CHECK(rows_of(test_tmp_path("longname.csv"), err, sizeof err) == -1 &&
          test_contains(err, "line 2, column 1: name: longer than 63 characters"));

    /* empty cells, out of range, not integers, NUL, CRLF blank lines */
    CHECK(rows_of(file_of("empty.csv", HEADER "e,1,16,,12,16,3,3,1,1,1,1,1,1,1\n"), err,
                  sizeof err) == -1 &&
          test_contains(err, "empty.csv line 2, column 4: h: empty"));
    CHECK(rows_of(file_of("short.csv", HEADER "s,1,16,12,12,16,3,3,1,1,1,1,1,1\n"), err,
                  sizeof err) == -1 &&
          test_contains(err, "short.csv line 2: 14 fields, the header has 15"));
    CHECK(
        rows_of(file_of("big.csv", HEADER "b,99999999999999999999,16,12,12,16,3,3,1,1,1,1,1,1,1\n"),
                err, sizeof err) == -1 &&
        test_contains(err, "big.csv line 2, column 2: n: 99999999999999999999 is out of range"));
    CHECK(rows_of(file_of("huge.csv", HEADER "b,1,16,12,12,16,3,3,1,1,1,1,1,1,3000000000\n"), err,
                  sizeof err) == -1 &&
          test_contains(err, "column 15") && test_contains(err, "must be <="));
    CHECK(rows_of(file_of("word.csv", HEADER "w,1,16,12,12,sixteen,3,3,1,1,1,1,1,1,1\n"), err,
                  sizeof err) == -1 &&
          test_contains(err, "word.csv line 2, column 6: k: 'sixteen' is not an integer"));
    CHECK(rows_of(file_of("neg.csv", HEADER "w,1,16,12,12,16,3,3,-1,1,1,1,1,1,1\n"), err,
                  sizeof err) == -1 &&
          test_contains(err, "column 9: pad_h = -1: must be >= 0"));
    CHECK(rows_of(file_of("groups.csv", HEADER "g,1,16,12,12,16,3,3,1,1,1,1,1,1,3\n"), err,
                  sizeof err) == -1 &&
          test_contains(err, "line 2, column 15: row g: conv_desc.groups = 3: must divide"));
    static const char nul[] = HEADER ROW("a") "b,1,16,12,12,16,3,3\0,1,1,1,1,1,1,1\n";
    write_bytes(test_tmp_path("nul.csv"), nul, sizeof nul - 1);
    CHECK(rows_of(test_tmp_path("nul.csv"), err, sizeof err) == -1 &&
          test_contains(err, "nul.csv line 3, column 8: a NUL byte"));
    CHECK(rows_of(file_of("crlf.csv",
                          "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups\r\n"
                          "\r\na,1,16,12,12,16,3,3,1,1,1,1,1,1,1\r\n\r\n"),
                  err, sizeof err) == 1);
    CHECK(rows_of(file_of("blank.csv", HEADER "\n\n" ROW("a") "\n"), err, sizeof err) == 1);

    /* headers: another order, optional columns, unknown and repeated ones, none at all */
    CHECK(rows_of(file_of("order.csv",
                          "groups,name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,"
                          "network,family\n1,x,1,16,12,12,16,3,3,1,1,1,1,1,1,net,fam\n"),
                  err, sizeof err) == 1);
    struct problem_list list = {0};
    CHECK(problem_list_read(test_tmp_path("order.csv"), &list, err, sizeof err) && list.n == 1 &&
          strcmp(list.rows[0].network, "net") == 0 && strcmp(list.rows[0].family, "fam") == 0 &&
          list.rows[0].origin == PROBLEM_ORIGIN_LAYER && list.rows[0].p.c == 16);
    problem_list_free(&list);
    CHECK(rows_of(file_of("unknown.csv", "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,"
                                         "dil_w,groups,colour\n"),
                  err, sizeof err) == -1 &&
          test_contains(err, "unknown.csv line 1, column 16: unknown column 'colour'"));
    CHECK(rows_of(file_of("twice.csv", "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,"
                                       "dil_w,groups,n\n"),
                  err, sizeof err) == -1 &&
          test_contains(err, "column 16: column 'n' appears twice"));
    CHECK(rows_of(file_of("lacks.csv", "name,n,c\nx,1,2\n"), err, sizeof err) == -1 &&
          test_contains(err, "lacks.csv line 1: the header lacks column 'h'"));
    CHECK(rows_of(file_of("nothing.csv", ""), err, sizeof err) == -1 &&
          test_contains(err, "empty file"));
    CHECK(rows_of(file_of("onlyhead.csv", HEADER "# nothing\n"), err, sizeof err) == -1 &&
          test_contains(err, "no problems"));

    /* not files */
    CHECK(mkdir(test_tmp_path("dir.csv"), 0755) == 0);
    CHECK(rows_of(test_tmp_path("dir.csv"), err, sizeof err) == -1 &&
          test_contains(err, "a directory without *.csv files"));
    CHECK(rows_of(test_tmp_path("missing.csv"), err, sizeof err) == -1 &&
          test_contains(err, "missing.csv: does not exist"));
    CHECK(mkfifo(test_tmp_path("fifo.csv"), 0644) == 0);
    CHECK(rows_of(test_tmp_path("fifo.csv"), err, sizeof err) == -1 &&
          test_contains(err, "fifo.csv: is a FIFO, not a regular file"));

    /* a directory of lists: every *.csv in name order, appended */
    CHECK(mkdir(test_tmp_path("lists"), 0755) == 0);
    file_of("lists/b.csv", HEADER ROW("b1") ROW("b2"));
    file_of("lists/a.csv", HEADER ROW("a1"));
    file_of("lists/notes.txt", "not a list");
    CHECK(problem_list_read(test_tmp_path("lists"), &list, err, sizeof err) && list.n == 3 &&
          strcmp(list.rows[0].name, "a1") == 0 && strcmp(list.rows[2].name, "b2") == 0);
    problem_list_free(&list);
    /* written and read back */
    CHECK(problem_list_read(test_tmp_path("order.csv"), &list, err, sizeof err));
    FILE *f = fopen(test_tmp_path("back.csv"), "w");
    problem_list_write(f, &list, true);
    fclose(f);
    problem_list_free(&list);
    CHECK(problem_list_read(test_tmp_path("back.csv"), &list, err, sizeof err) && list.n == 1 &&
          strcmp(list.rows[0].family, "fam") == 0);
    problem_list_free(&list);

    test_tmpdir_remove();
    return test_finish("test_csv");
}
