/*
 * A synthetic header for the generator's tests: every C construct the UCX headers use (and a few they might),
 * small enough to check by hand. synthetic.c implements it; the tests compile both and call through the
 * generated Java.
 */
#ifndef SYNTHETIC_H
#define SYNTHETIC_H

#include <stdint.h>

/* ---- macros ---------------------------------------------------------------------------------------------------- */

#define SYN_SHIFT      (1 << 4)
#define SYN_NEGATIVE   -5
#define SYN_BIG        0x100000000ull
#define SYN_UNSIGNED   4000000000u
#define SYN_LONG       123456789012L
#define SYN_TEXT       "syn\"text\"\n"
#define SYN_DOUBLE     2.5
#define SYN_FLOAT      1.25f
#define SYN_EXPR       (SYN_SHIFT | 3)
#define SYN_CHAR       'A'
#define SYN_MAX(a, b)  ((a) > (b) ? (a) : (b))
#define SYN_NOT_CONST  syn_global_counter

/* ---- enums ----------------------------------------------------------------------------------------------------- */

/* Packed to one byte, as UCX's ucs_status_t. */
typedef enum __attribute__((packed)) syn_status {
    SYN_OK          =  0,
    SYN_INPROGRESS  =  1,
    SYN_ERR_IO      = -3,
    SYN_ERR_LAST    = -100
} syn_status_t;

enum syn_flags {
    SYN_FLAG_A = 1u << 0,
    SYN_FLAG_B = 1u << 31
};

/* ---- records --------------------------------------------------------------------------------------------------- */

typedef struct syn_point {
    int32_t x;
    int32_t y;
} syn_point_t;

typedef struct syn_vec3 {
    double x, y, z;
} syn_vec3_t;

/* Functions and callbacks that pass structs by value. */
typedef syn_point_t (*syn_transform_cb_t)(syn_point_t p, int32_t scale);

struct syn_complex {
    syn_status_t status;                       /* 1-byte enum field */
    char tag;
    /* C11 anonymous union inside a struct, its fields reached through syn_complex */
    union {
        uint64_t as_u64;
        double as_double;
        struct {                               /* anonymous struct inside the anonymous union */
            uint32_t lo;
            uint32_t hi;
        };
    };
    struct {                                   /* a named field of anonymous struct type */
        int16_t width;
        int16_t height;
        char name[6];
    } size;
    struct {                                   /* two fields of one anonymous type */
        uint8_t r, g, b;
    } fg, bg;
    int32_t values[5];                         /* 1-D array of ints */
    int16_t matrix[2][3];                      /* 2-D array of ints */
    syn_point_t corners[4];                    /* array of structs */
    syn_point_t grid[2][2];                    /* 2-D array of structs */
    char **names;                              /* pointer to pointer */
    syn_point_t (*on_point)(syn_point_t p, int32_t scale);  /* anonymous function-pointer field */
    syn_transform_cb_t transform;              /* typedef'd function-pointer field */
    struct {
        int32_t depth;
        union {
            float f;
            int32_t i;
        };
    } inner;                                   /* named anonymous struct holding an anonymous union */
    struct {                                   /* 1-D and 2-D arrays of an anonymous struct type */
        int32_t k;
        int32_t v;
    } entries[2], table[2][2];
    int32_t class;                             /* a Java keyword as a field name */
    int64_t trailer;
};

typedef struct syn_complex syn_complex_t;

/* Only a callback field, whose signature passes syn_point_t by value. */
struct syn_handler {
    syn_point_t (*fn)(syn_point_t p);
};

/* A union at top level, with a struct member. */
typedef union syn_value {
    int64_t i;
    double d;
    syn_point_t point;
} syn_value_t;

/* ---- functions ------------------------------------------------------------------------------------------------- */

syn_status_t syn_status_of(int code);
int syn_status_code(syn_status_t status);

syn_point_t syn_point_add(syn_point_t a, syn_point_t b);
syn_vec3_t syn_vec3_scale(syn_vec3_t v, double factor);
double syn_vec3_dot(syn_vec3_t a, syn_vec3_t b);

/* Calls cb with (p, scale) and returns the x + y of what it returns. */
int32_t syn_apply_transform(syn_transform_cb_t cb, syn_point_t p, int32_t scale);
/* Calls c->on_point(p, 10) and stores what it returns in c->corners[0]. */
void syn_complex_call(struct syn_complex *c, syn_point_t p);
/* Fills every field of c with values derived from seed (see synthetic.c). */
void syn_complex_fill(syn_complex_t *c, int seed);
/* 0 when c holds what syn_complex_fill(c, seed) writes, else the number of the first field that differs. */
int syn_complex_verify(const syn_complex_t *c, int seed);
/* Returns the function pointer that doubles a point (scaled). */
syn_transform_cb_t syn_get_transform(void);

int sum_ints(int n, ...);
int noproto();

int syn_count_chars(char **strings, int count);

/* Calls h->fn with the point (x, x + 1) and returns the y of what it returns. */
int syn_negate_via(struct syn_handler *h, int x);
/* A handler whose fn negates the point. */
struct syn_handler syn_make_handler(void);

/* The layout truth: "CLASS sizeof=N", "CLASS alignof=N", "CLASS#FIELD offset=N" and "CLASS#FIELD size=N"
 * lines, one per line, as gcc lays the records out; CLASS is the generated Java class. */
const char *syn_layout_table(void);

static inline int syn_inline_twice(int x)
{
    return 2 * x;
}

/* ---- variables ------------------------------------------------------------------------------------------------- */

extern int syn_global_counter;
extern syn_transform_cb_t syn_global_transform;
extern syn_point_t syn_global_origin;
extern syn_status_t syn_global_status;

#endif
