/* irqsteerctl: everything but main() is in the library (ctl*.c). */
#include "ctl.h"

int main(int argc, char **argv) {
        return ctl_main(argc, argv);
}
