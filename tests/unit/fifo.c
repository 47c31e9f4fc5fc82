/* Tests base/fifo.h, the one intrusive FIFO: push keeps arrival order,
 * push_front goes ahead of it, remove takes a record out of the middle or
 * either end and leaves head, tail and both directions of links right,
 * pop and remove leave a record that linked() reports gone, take_all hands
 * back the chain oldest first and empties the queue. */
#include <stddef.h>

#include "base/fifo.h"
#include "check.h"

struct rec {
    struct rec *next, *prev;
    int id;
};

WEFT__FIFO(recq, recq, struct rec)

/* The ids from head to tail, as digits; checks the back links on the way
 * and that tail is the last record. */
static const char *order(const struct recq *q)
{
    static char s[16];
    int n = 0;
    const struct rec *prev = NULL;
    for (const struct rec *r = q->head; r; r = r->next) {
        CHECK(r->prev == prev);
        s[n++] = (char)('0' + r->id);
        prev = r;
    }
    CHECK(q->tail == prev);
    s[n] = 0;
    return s;
}

int main(void)
{
    struct rec r[6];
    for (int i = 0; i < 6; i++)
        r[i] = (struct rec){ .id = i };
    struct recq q = { 0 };
    CHECK(recq_empty(&q));
    CHECK(recq_pop(&q) == NULL);

    recq_push(&q, &r[1]);
    recq_push(&q, &r[2]);
    recq_push(&q, &r[3]);
    recq_push_front(&q, &r[0]);
    recq_push(&q, &r[4]);
    CHECK(strcmp(order(&q), "01234") == 0);

    recq_remove(&q, &r[2]); /* the middle */
    CHECK(strcmp(order(&q), "0134") == 0);
    CHECK(!recq_linked(&q, &r[2]));
    recq_remove(&q, &r[4]); /* the tail */
    CHECK(strcmp(order(&q), "013") == 0);
    recq_remove(&q, &r[0]); /* the head */
    CHECK(strcmp(order(&q), "13") == 0);
    CHECK(recq_linked(&q, &r[1]) && recq_linked(&q, &r[3]));
    CHECK(!recq_linked(&q, &r[0]) && !recq_linked(&q, &r[4]));

    CHECK(recq_pop(&q) == &r[1]);
    CHECK(!recq_linked(&q, &r[1]));
    CHECK(recq_linked(&q, &r[3])); /* alone: head, no prev */
    CHECK(recq_pop(&q) == &r[3]);
    CHECK(recq_empty(&q) && q.tail == NULL);

    /* Ends of a one-record queue, from the front. */
    recq_push_front(&q, &r[5]);
    CHECK(strcmp(order(&q), "5") == 0);
    recq_remove(&q, &r[5]);
    CHECK(recq_empty(&q) && q.tail == NULL);

    for (int i = 0; i < 4; i++)
        recq_push(&q, &r[i]);
    struct rec *chain = recq_take_all(&q);
    CHECK(recq_empty(&q) && q.tail == NULL);
    int n = 0;
    for (struct rec *x = chain; x; x = x->next)
        CHECK_EQ(x->id, n++);
    CHECK_EQ(n, 4);
    return 0;
}
