/* llmc_split_check.c — proves the data recipe of docs/llmc.md with llm.c's own loader
 * (llmc/dataloader.h, compiled in unmodified): for STEPS steps (past an epoch, so the reshuffle
 * is covered), the batch the 1-rank job reads (B = G rows of T tokens, FULL) split by rank,
 * inputs and targets, equals what rank r's job reads from SHARD_r with B = G / W, each loader
 * opened as every rank of an accelshim job opens it (rank 0 of 1, shuffled: seed 42).
 *   llmc_split_check FULL G T STEPS SHARD0 [SHARD1 ...]
 * Exit 0: every step equal; 1: the first difference printed with both sides; 2: usage.
 * Built only when the corpus is present (tests/thirdparty/module.mk).
 * Must not: modify llm.c's loader or the files it reads (it only reads them).
 */
#include "llmc/dataloader.h"

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: llmc_split_check FULL G T STEPS SHARD0 [SHARD1 ...]\n");
        return 2;
    }
    int G = atoi(argv[2]), T = atoi(argv[3]), steps = atoi(argv[4]), W = argc - 5;
    if (G <= 0 || T <= 0 || steps <= 0 || G % W) {
        fprintf(stderr, "llmc_split_check: G %d must be a positive multiple of the %d shards\n", G, W);
        return 2;
    }
    int B = G / W;
    DataLoader full, *ranks = calloc((size_t)W, sizeof *ranks);
    dataloader_init(&full, argv[1], G, T, 0, 1, 1);
    for (int r = 0; r < W; r++)
        dataloader_init(&ranks[r], argv[5 + r], B, T, 0, 1, 1);
    for (int s = 0; s < steps; s++) {
        dataloader_next_batch(&full);
        for (int r = 0; r < W; r++) {
            dataloader_next_batch(&ranks[r]);
            for (int i = 0; i < B * T; i++) {
                int j = r * B * T + i;
                if (full.inputs[j] != ranks[r].inputs[i] || full.targets[j] != ranks[r].targets[i]) {
                    printf("step %d rank %d position %d: 1-rank batch (input %d, target %d) != %s (input %d, "
                           "target %d)\n", s, r, i, full.inputs[j], full.targets[j], argv[5 + r],
                           ranks[r].inputs[i], ranks[r].targets[i]);
                    return 1;
                }
            }
        }
    }
    printf("llmc_split_check: %d steps: the 1-rank batch of %d x %d == %d shards of %d rows, inputs and targets\n",
           steps, G, T, W, B);
    return 0;
}
