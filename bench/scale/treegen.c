/* treegen.c: the skeleton of a work tree for the scale model (model.py).
 *
 * The model simulates every spawn of the upper part of a tree and runs each
 * subtree smaller than CUT nodes in bulk, as one leaf task of known size.
 * Python cannot walk 10^8 UTS nodes (a SHA-1 each) in minutes, so this walks
 * the tree once, depth-first, and prints its skeleton in post-order, one
 * token per line:
 *   L s     a subtree of s nodes (s < CUT), run in bulk
 *   E k     a node of at least CUT nodes whose k children were printed just
 *           before it (each an L or an E)
 * The last line is the root. A first line "# tree=... nodes=N" gives the
 * total, which the model checks against the tree's known count.
 *
 *   treegen uts T1|T1L|T3 CUT       UTS trees (bench/apps/uts/uts_tree.c)
 *   treegen nqueens N CUT           a node per legal placement, as
 *                                   bench/dist/dist_apps.c spawns them
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../apps/uts/uts_tree.h"

/* Tokens of the skeleton, post-order; a subtree under CUT is collapsed into
 * one token once its size is known. */
struct tok {
    char kind; /* 'L' or 'E' */
    long n;    /* L: nodes; E: children */
};
static struct tok *toks;
static size_t ntoks, captoks;
static long cut;

static void push(char kind, long n)
{
    if (ntoks == captoks) {
        captoks = captoks ? 2 * captoks : 1 << 16;
        toks = realloc(toks, captoks * sizeof *toks);
        if (!toks) {
            perror("treegen: realloc");
            exit(1);
        }
    }
    toks[ntoks++] = (struct tok){ kind, n };
}

/* After a node's children pushed their tokens from mark on: collapse them
 * into a leaf when the subtree is small, else close the node. */
static void close_node(size_t mark, long size, long children)
{
    if (size < cut) {
        ntoks = mark;
        push('L', size);
    } else {
        push('E', children);
    }
}

static const uts_tree *tree;

static long walk_uts(const uts_node *n)
{
    size_t mark = ntoks;
    int k = uts_num_children(tree, n);
    long size = 1;
    for (int i = 0; i < k; i++) {
        uts_node c;
        uts_child(n, i, &c);
        size += walk_uts(&c);
    }
    close_node(mark, size, k);
    return size;
}

static int queens_n;

static int legal(const signed char *col, int row, int c)
{
    for (int r = 0; r < row; r++) {
        int d = col[r] - c;
        if (d == 0 || d == row - r || d == r - row)
            return 0;
    }
    return 1;
}

static long walk_queens(signed char *col, int row)
{
    size_t mark = ntoks;
    long size = 1, k = 0;
    if (row < queens_n)
        for (int c = 0; c < queens_n; c++)
            if (legal(col, row, c)) {
                col[row] = (signed char)c;
                size += walk_queens(col, row + 1);
                k++;
            }
    close_node(mark, size, k);
    return size;
}

int main(int argc, char **argv)
{
    /* UTS's sample trees: T1 and T3 as bench/apps/uts/uts.c, T1L as UTS's
     * sample_trees.sh (-t 1 -a 3 -d 13 -b 4 -r 29, 102,181,082 nodes) */
    static const uts_tree t1 = { UTS_GEO, UTS_SHAPE_FIXED, 10, 4.0, 19, 15.0 / 64.0, 4, 0.5 };
    static const uts_tree t1l = { UTS_GEO, UTS_SHAPE_FIXED, 13, 4.0, 29, 15.0 / 64.0, 4, 0.5 };
    static const uts_tree t3 = { UTS_BIN, UTS_SHAPE_LINEAR, 6, 2000.0, 42, 0.124875, 8, 0.5 };
    long total;
    if (argc == 4 && !strcmp(argv[1], "uts")) {
        tree = !strcmp(argv[2], "T1")    ? &t1
               : !strcmp(argv[2], "T1L") ? &t1l
               : !strcmp(argv[2], "T3")  ? &t3
                                         : NULL;
        cut = atol(argv[3]);
        if (!tree || cut < 1)
            goto usage;
        uts_node root;
        uts_root(tree, &root);
        total = walk_uts(&root);
    } else if (argc == 4 && !strcmp(argv[1], "nqueens")) {
        queens_n = atoi(argv[2]);
        cut = atol(argv[3]);
        if (queens_n < 1 || queens_n > 20 || cut < 1)
            goto usage;
        signed char col[20];
        total = walk_queens(col, 0);
    } else {
        goto usage;
    }
    printf("# tree=%s %s cut=%ld nodes=%ld tokens=%zu\n", argv[1], argv[2], cut, total, ntoks);
    for (size_t i = 0; i < ntoks; i++)
        printf("%c %ld\n", toks[i].kind, toks[i].n);
    return 0;
usage:
    fprintf(stderr, "usage: treegen uts T1|T1L|T3 CUT | treegen nqueens N CUT\n");
    return 2;
}
