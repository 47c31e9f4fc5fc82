/* hello.c: the smallest weft program: a tree of user threads summing 1..n.
 * Build against an installed weft: cc hello.c $(pkg-config --cflags --libs weft) */
#include <stdint.h>
#include <stdio.h>
#include <weft.h>

struct range {
    long lo, hi;
};

static void *sum(void *arg)
{
    struct range *r = arg;
    if (r->hi - r->lo <= 1000) {
        long s = 0;
        for (long i = r->lo; i < r->hi; i++)
            s += i;
        return (void *)(intptr_t)s;
    }
    long mid = r->lo + (r->hi - r->lo) / 2;
    struct range left = { r->lo, mid }, right = { mid, r->hi };
    weft_thread *t;
    if (weft_spawn(&t, sum, &left, NULL) != 0)
        return NULL;
    void *a, *b = sum(&right);
    weft_join(t, &a);
    return (void *)((intptr_t)a + (intptr_t)b);
}

int main(void)
{
    int rc = weft_init(NULL); /* workers from WEFT_WORKERS or the CPU count */
    if (rc != 0) {
        fprintf(stderr, "weft_init: error %d\n", rc);
        return 1;
    }
    struct range all = { 1, 10000001 };
    void *s = sum(&all);
    printf("sum = %ld on %d workers\n", (long)(intptr_t)s, weft_num_workers());
    return weft_finalize() == 0 ? 0 : 1;
}
