/* Flat parameter blocks: one buffer of values and one of gradients, with named views. */
#include "nn/nn.h"

#include <stdlib.h>
#include <string.h>

void nn_params_init(nn_params *p)
{
    memset(p, 0, sizeof *p);
}

size_t nn_params_add(nn_params *p, const char *name, size_t n)
{
    HR_ASSERT(p->w == NULL); /* layout must be complete before allocation */
    HR_ASSERT(p->n_views < NN_MAX_VIEWS);
    HR_ASSERT(strlen(name) < sizeof p->views[0].name);
    for (int i = 0; i < p->n_views; i++) HR_ASSERT(strcmp(p->views[i].name, name) != 0);
    nn_param_view *v = &p->views[p->n_views++];
    strcpy(v->name, name);
    v->offset = p->n;
    v->size = n;
    p->n += n;
    return v->offset;
}

int nn_params_alloc(nn_params *p)
{
    HR_ASSERT(p->w == NULL);
    p->w = hr_calloc(p->n, sizeof *p->w);
    p->dw = hr_calloc(p->n, sizeof *p->dw);
    if (!p->w || !p->dw) {
        nn_params_free(p);
        return HR_ENOMEM;
    }
    return HR_OK;
}

void nn_params_zero_grad(nn_params *p)
{
    if (p->dw) memset(p->dw, 0, p->n * sizeof *p->dw);
}

const nn_param_view *nn_params_find(const nn_params *p, const char *name)
{
    for (int i = 0; i < p->n_views; i++)
        if (strcmp(p->views[i].name, name) == 0) return &p->views[i];
    return NULL;
}

void nn_params_free(nn_params *p)
{
    free(p->w);
    free(p->dw);
    p->w = p->dw = NULL;
}
