/* LeNet-5 for 28x28 Fashion-MNIST, built layer by layer from the .npy files
 * written by tools/train_lenet.py (see examples/lenet-weights/README.md).
 * Shared by examples/lenet.c and tools/dg-bench. */
#ifndef DG_EXAMPLES_LENET_MODEL_H
#define DG_EXAMPLES_LENET_MODEL_H

#include "graph.h"

/* Builds the network for batch images of 1x28x28 f32 (pixel / 255) named
 * "image", with output "probs" [batch, 10] (softmax). int8 selects the
 * quantised network (per-channel int8 weights, int8 activations). device
 * pins every node to that device index (-1: let placement decide).
 * Returns the graph (check dg_graph_status) or NULL when a weight file
 * cannot be read (err says which and why). */
dg_graph *lenet_build(dg_context *ctx, const char *weights_dir, int batch,
                      int int8, int device, char *err, size_t err_size);

#endif
