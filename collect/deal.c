/* The order and the chunks in which a job's problems are dealt to its workers (run.h). */
#include <stdlib.h>

#include "collect.h"
#include "run.h"

typedef struct deal_item {
    double cost;
    int key;
} deal_item;

/* decreasing cost, then increasing key index: a total order, so every process sorts alike */
static int cmp_deal(const void *a, const void *b)
{
    const deal_item *x = a, *y = b;
    if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
    return (x->key > y->key) - (x->key < y->key);
}

int collect_deal_order(int *todo, const double *cost, int n)
{
    if (n < 2) return COLLECT_OK;
    deal_item *items = malloc((size_t)n * sizeof *items);
    if (!items) return collect_error(COLLECT_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) items[i] = (deal_item){cost[i] == cost[i] ? cost[i] : 0.0, todo[i]};
    qsort(items, (size_t)n, sizeof *items, cmp_deal);
    for (int i = 0; i < n; i++) todo[i] = items[i].key;
    free(items);
    return COLLECT_OK;
}

int collect_deal_chunk(int first, int n_todo, int chunk, int workers)
{
    int left = n_todo - first, share = left / (2 * (workers > 0 ? workers : 1));
    if (left <= 0) return 0;
    int size = chunk < share ? chunk : share;
    return size < 1 ? 1 : size;
}
