/* uts_tree.h: the Unbalanced Tree Search tree: node state, the splittable SHA-1 random stream and the child-count rule.
 *
 * UTS (Olivier et al., LCPC 2006) describes an implicit tree: each node holds
 * a 20-byte SHA-1 digest; the root's is the digest of 16 zero bytes followed
 * by the big-endian 32-bit root seed, child i's is the digest of its parent's
 * 20 bytes followed by big-endian i. A node's number of children is drawn
 * from its own digest (the low 31 bits of bytes 16..19, big-endian, scaled
 * to [0, 1)), so the tree is the same whatever order or thread visits it.
 *
 * The tree types (-t), with u that fraction:
 *   geometric  floor(log(1 - u) / log(1 - p)) children, p = 1 / (1 + b_i):
 *              the inverse of the geometric distribution's CDF, whose mean
 *              b_i at depth d follows the shape function (-a)
 *   binomial   the root has floor(b_0) children; every other node has m
 *              (-m) children when u < q (-q), else none
 *   hybrid     geometric above depth shift * gen_mx (-f), binomial below
 *   balanced   b_0 children down to depth gen_mx
 * Counts are capped at UTS_MAX_CHILDREN, but for a binomial root.
 */
#ifndef WEFT_BENCH_UTS_TREE_H
#define WEFT_BENCH_UTS_TREE_H

#include <stddef.h>
#include <stdint.h>

#define UTS_DIGEST_BYTES 20
/* UTS's cap on the children of one node of a geometric tree. */
#define UTS_MAX_CHILDREN 100

/* The shape functions of UTS's -a, numbered as UTS numbers them. */
enum uts_shape {
    UTS_SHAPE_LINEAR = 0, /* b_0 * (1 - d / gen_mx) */
    UTS_SHAPE_EXPDEC = 1, /* b_0 * d^(-log b_0 / log gen_mx) */
    UTS_SHAPE_CYCLIC = 2, /* b_0^sin(2 pi d / gen_mx), 0 past 5 * gen_mx */
    UTS_SHAPE_FIXED = 3,  /* b_0 below gen_mx, then 0 */
};

/* UTS's tree types (-t), numbered as UTS numbers them. */
enum uts_type { UTS_BIN = 0, UTS_GEO = 1, UTS_HYBRID = 2, UTS_BALANCED = 3 };

typedef struct uts_tree {
    int type;     /* enum uts_type (-t) */
    int shape;    /* enum uts_shape (-a) */
    int gen_mx;   /* -d: depth of the fixed shape, period of the others */
    double b0;    /* -b: the root's (expected) branching factor */
    int seed;     /* UTS's -r: the root seed */
    double q;     /* -q: binomial: probability that a node has children */
    int m;        /* -m: binomial: the children of a node that has any */
    double shift; /* -f: hybrid: binomial from depth shift * gen_mx on */
} uts_tree;

typedef struct uts_node {
    uint8_t state[UTS_DIGEST_BYTES]; /* this node's digest: its random stream */
    int height;                      /* depth; the root is 0 */
} uts_node;

/* FIPS 180-4 SHA-1 of len bytes at msg into out. */
void uts_sha1(const void *msg, size_t len, uint8_t out[UTS_DIGEST_BYTES]);

/* 0 when uts_sha1 gives the standard's test vectors, else -1. */
int uts_sha1_selftest(void);

void uts_root(const uts_tree *t, uts_node *root);

/* Child i of parent (the i-th split of its stream), one level deeper. */
void uts_child(const uts_node *parent, int i, uts_node *child);

int uts_num_children(const uts_tree *t, const uts_node *n);

#endif /* WEFT_BENCH_UTS_TREE_H */
