/* irqsteerctl: placeholder main until the daemon module lands. */
#include <stdio.h>
int main(void) {
        fprintf(stderr, "irqsteerctl: not built yet\n");
        return 1;
}
