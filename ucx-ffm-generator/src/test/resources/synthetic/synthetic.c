/* The implementation of synthetic.h for the generator's tests: gcc -shared -fPIC -o libsynthetic.so synthetic.c */
#include "synthetic.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

int syn_global_counter = 7;
syn_point_t syn_global_origin = { -11, 22 };
syn_status_t syn_global_status = SYN_ERR_LAST;

/* Doubles the point and multiplies by scale. */
static syn_point_t syn_double_point(syn_point_t p, int32_t scale)
{
    syn_point_t r = { 2 * p.x * scale, 2 * p.y * scale };
    return r;
}

static syn_point_t syn_negate_point(syn_point_t p)
{
    syn_point_t r = { -p.x, -p.y };
    return r;
}

syn_transform_cb_t syn_global_transform = syn_double_point;

syn_status_t syn_status_of(int code)
{
    switch (code) {
    case 0: return SYN_OK;
    case 1: return SYN_INPROGRESS;
    case 3: return SYN_ERR_IO;
    default: return SYN_ERR_LAST;
    }
}

int syn_status_code(syn_status_t status)
{
    /* sizeof(status) == 1: a caller passing a wider value would still be read as its low byte */
    return (int)status * 1000 + (int)sizeof(status);
}

syn_point_t syn_point_add(syn_point_t a, syn_point_t b)
{
    syn_point_t r = { a.x + b.x, a.y + b.y };
    return r;
}

syn_vec3_t syn_vec3_scale(syn_vec3_t v, double factor)
{
    syn_vec3_t r = { v.x * factor, v.y * factor, v.z * factor };
    return r;
}

double syn_vec3_dot(syn_vec3_t a, syn_vec3_t b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

int32_t syn_apply_transform(syn_transform_cb_t cb, syn_point_t p, int32_t scale)
{
    syn_point_t r = cb(p, scale);
    return r.x * 1000 + r.y;
}

void syn_complex_call(struct syn_complex *c, syn_point_t p)
{
    c->corners[0] = c->on_point(p, 10);
}

syn_transform_cb_t syn_get_transform(void)
{
    return syn_double_point;
}

static const char *syn_names[] = { "alpha", "beta", NULL };

/* The values syn_complex_fill writes and syn_complex_verify expects, as functions of the seed. */
void syn_complex_fill(syn_complex_t *c, int s)
{
    memset(c, 0, sizeof(*c));
    c->status = SYN_ERR_IO;
    c->tag = (char)(s + 1);
    c->lo = (uint32_t)(s + 2);
    c->hi = (uint32_t)(s + 3);
    c->size.width = (int16_t)(s + 4);
    c->size.height = (int16_t)-(s + 5);
    strcpy(c->size.name, "abcde");
    c->fg.r = (uint8_t)(s + 6);
    c->fg.g = (uint8_t)(s + 7);
    c->fg.b = (uint8_t)(s + 8);
    c->bg.r = (uint8_t)(s + 9);
    c->bg.g = (uint8_t)(s + 10);
    c->bg.b = (uint8_t)(s + 11);
    for (int i = 0; i < 5; i++) {
        c->values[i] = s * 10 + i;
    }
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 3; j++) {
            c->matrix[i][j] = (int16_t)(s + 100 * i + j);
        }
    }
    for (int i = 0; i < 4; i++) {
        c->corners[i].x = s + i;
        c->corners[i].y = -(s + i);
    }
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            c->grid[i][j].x = s + 10 * i + j;
            c->grid[i][j].y = s + 1000;
        }
    }
    c->names = (char **)syn_names;
    c->on_point = syn_double_point;
    c->transform = syn_double_point;
    c->inner.depth = s + 12;
    c->inner.i = s + 13;
    for (int i = 0; i < 2; i++) {
        c->entries[i].k = s + i;
        c->entries[i].v = 2 * s + i;
        for (int j = 0; j < 2; j++) {
            c->table[i][j].k = s + 10 * i + j;
            c->table[i][j].v = -(s + 10 * i + j);
        }
    }
    c->class = s + 14;
    c->trailer = ((int64_t)s << 40) | 7;
}

/* 0 when c holds what syn_complex_fill(c, s) would write (function pointers only need to be set), else the
 * number of the first field that differs. */
int syn_complex_verify(const syn_complex_t *c, int s)
{
    syn_complex_t e;
    syn_complex_fill(&e, s);
    if (c->status != e.status) return 1;
    if (c->tag != e.tag) return 2;
    if (c->lo != e.lo || c->hi != e.hi || c->as_u64 != e.as_u64) return 3;
    if (c->size.width != e.size.width || c->size.height != e.size.height) return 4;
    if (memcmp(c->size.name, e.size.name, sizeof(e.size.name)) != 0) return 5;
    if (memcmp(&c->fg, &e.fg, sizeof(e.fg)) != 0) return 6;
    if (memcmp(&c->bg, &e.bg, sizeof(e.bg)) != 0) return 7;
    if (memcmp(c->values, e.values, sizeof(e.values)) != 0) return 8;
    if (memcmp(c->matrix, e.matrix, sizeof(e.matrix)) != 0) return 9;
    if (memcmp(c->corners, e.corners, sizeof(e.corners)) != 0) return 10;
    if (memcmp(c->grid, e.grid, sizeof(e.grid)) != 0) return 11;
    if (c->names == NULL || strcmp(c->names[0], "alpha") != 0 || strcmp(c->names[1], "beta") != 0) return 12;
    if (c->on_point == NULL || c->transform == NULL) return 13;
    if (c->inner.depth != e.inner.depth || c->inner.i != e.inner.i) return 14;
    if (memcmp(c->entries, e.entries, sizeof(e.entries)) != 0) return 15;
    if (memcmp(c->table, e.table, sizeof(e.table)) != 0) return 16;
    if (c->class != e.class) return 17;
    if (c->trailer != e.trailer) return 18;
    return 0;
}

int sum_ints(int n, ...)
{
    va_list ap;
    int sum = 0;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        sum += va_arg(ap, int);
    }
    va_end(ap);
    return sum;
}

int noproto()
{
    return 42;
}

int syn_count_chars(char **strings, int count)
{
    int n = 0;
    for (int i = 0; i < count; i++) {
        n += (int)strlen(strings[i]);
    }
    return n;
}

int syn_negate_via(struct syn_handler *h, int x)
{
    syn_point_t p = { x, x + 1 };
    return h->fn(p).y;
}

struct syn_handler syn_make_handler(void)
{
    struct syn_handler h = { syn_negate_point };
    return h;
}

/* ---- the layout truth ------------------------------------------------------------------------------------------ */

static char syn_layout[8192];
static size_t syn_layout_len;

static void syn_put(const char *key, size_t value)
{
    syn_layout_len += (size_t)snprintf(syn_layout + syn_layout_len, sizeof(syn_layout) - syn_layout_len,
                                       "%s=%zu\n", key, value);
}

#define MEMBER(T, f) (((T *)0)->f)
/* A record: its Java class name, its C type. */
#define RECORD(name, T) \
    syn_put(name " sizeof", sizeof(T)); \
    syn_put(name " alignof", _Alignof(T))
/* A field as the Java class of T sees it: offset from the start of T, and size. */
#define FIELD(name, T, f) \
    syn_put(name "#" #f " offset", offsetof(T, f)); \
    syn_put(name "#" #f " size", sizeof(MEMBER(T, f)))
#define JFIELD(name, T, f, jf) \
    syn_put(name "#" jf " offset", offsetof(T, f)); \
    syn_put(name "#" jf " size", sizeof(MEMBER(T, f)))

typedef struct syn_complex C;
typedef __typeof__(MEMBER(C, size)) C_size;
typedef __typeof__(MEMBER(C, fg)) C_fg;
typedef __typeof__(MEMBER(C, inner)) C_inner;
typedef __typeof__(MEMBER(C, entries[0])) C_entries;

const char *syn_layout_table(void)
{
    if (syn_layout_len != 0) {
        return syn_layout;
    }
    RECORD("syn_point", struct syn_point);
    FIELD("syn_point", struct syn_point, x);
    FIELD("syn_point", struct syn_point, y);

    RECORD("syn_vec3", struct syn_vec3);
    FIELD("syn_vec3", struct syn_vec3, x);
    FIELD("syn_vec3", struct syn_vec3, y);
    FIELD("syn_vec3", struct syn_vec3, z);

    RECORD("syn_handler", struct syn_handler);
    FIELD("syn_handler", struct syn_handler, fn);

    RECORD("syn_value", union syn_value);
    FIELD("syn_value", union syn_value, i);
    FIELD("syn_value", union syn_value, d);
    FIELD("syn_value", union syn_value, point);

    RECORD("syn_complex", C);
    FIELD("syn_complex", C, status);
    FIELD("syn_complex", C, tag);
    FIELD("syn_complex", C, as_u64);
    FIELD("syn_complex", C, as_double);
    FIELD("syn_complex", C, lo);
    FIELD("syn_complex", C, hi);
    FIELD("syn_complex", C, size);
    FIELD("syn_complex", C, fg);
    FIELD("syn_complex", C, bg);
    FIELD("syn_complex", C, values);
    FIELD("syn_complex", C, matrix);
    FIELD("syn_complex", C, corners);
    FIELD("syn_complex", C, grid);
    FIELD("syn_complex", C, names);
    FIELD("syn_complex", C, on_point);
    FIELD("syn_complex", C, transform);
    FIELD("syn_complex", C, inner);
    FIELD("syn_complex", C, entries);
    FIELD("syn_complex", C, table);
    JFIELD("syn_complex", C, class, "class_");
    FIELD("syn_complex", C, trailer);

    RECORD("syn_complex.size", C_size);
    FIELD("syn_complex.size", C_size, width);
    FIELD("syn_complex.size", C_size, height);
    FIELD("syn_complex.size", C_size, name);

    RECORD("syn_complex.fg", C_fg);
    FIELD("syn_complex.fg", C_fg, r);
    FIELD("syn_complex.fg", C_fg, g);
    FIELD("syn_complex.fg", C_fg, b);

    RECORD("syn_complex.inner", C_inner);
    FIELD("syn_complex.inner", C_inner, depth);
    FIELD("syn_complex.inner", C_inner, f);
    FIELD("syn_complex.inner", C_inner, i);

    RECORD("syn_complex.entries", C_entries);
    FIELD("syn_complex.entries", C_entries, k);
    FIELD("syn_complex.entries", C_entries, v);
    return syn_layout;
}
