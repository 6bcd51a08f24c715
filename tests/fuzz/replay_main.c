/*
 * replay_main.c - runs a fuzz target's LLVMFuzzerTestOneInput on files, without libFuzzer: how
 * the regular test builds (release, and AddressSanitizer) replay the kept regression inputs and
 * seeds of tests/fuzz/regressions/TARGET/. Usage: replay_TARGET FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "replay: cannot open %s\n", argv[i]);
            return 2;
        }
        uint8_t *buf = NULL;
        size_t n = 0, cap = 0, r;
        do {
            if (n == cap) {
                cap = cap ? 2 * cap : 65536;
                uint8_t *t = realloc(buf, cap);
                if (!t) {
                    free(buf);
                    fclose(f);
                    return 2;
                }
                buf = t;
            }
            r = fread(buf + n, 1, cap - n, f);
            n += r;
        } while (r > 0);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
    }
    printf("replay: %d inputs\n", argc - 1);
    return 0;
}
