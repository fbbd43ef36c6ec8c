# Thin driver over the autotools build: it bootstraps configure and builds
# out of tree in $(BUILD) so the generated Makefile never overwrites this
# one.  It installs nothing: tools/deps.sh is that step.  Run `make help`.
# It configures for a system daemon (--prefix=/usr --sysconfdir=/etc, so
# the configuration is /etc/irqsteer/irqsteer.conf); CONFIGURE_FLAGS adds to
# or overrides that.

BUILD ?= build
CONFIGURE_FLAGS ?=
RUN_ARGS ?=
CFLAGS ?= -g -O2

.PHONY: all run check check-live check-asan fuzz bench bench-quick torture soak-quick soak distcheck \
	install clean help deps-build deps-test deps-bench deps-fuzz

# Compiling runs on every CPU; the tests run one at a time (the live ones
# share the host's IRQs and namespaces).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

all: $(BUILD)/Makefile
	$(MAKE) -C $(BUILD) -j$(JOBS)

help:
	@echo 'sh tools/deps.sh build|test|bench|fuzz   install the Debian packages a step needs (root)'
	@echo 'make run     build, then run irqsteerd in the foreground on this host'
	@echo 'make check   build, then run the test suite but the live tests (nothing on this host changes)'
	@echo 'make check-live  only the live tests: they move this host'"'"'s IRQs, RPS masks and'
	@echo '                 threads and add network namespaces (root); make check LIVE=1 runs both'
	@echo 'make check-asan  the test suite built with ASan+UBSan (BUILD=build-asan; LIVE=1 as above)'
	@echo 'make fuzz    libFuzzer harnesses (clang, BUILD=build-fuzz), FUZZ_SECONDS each'
	@echo 'make bench | bench-quick   simulator benchmarks against irqbalance'
	@echo 'make torture     SIGKILL and fault torture on simulator trees (~100 s, root)'
	@echo 'make soak-quick | soak   soak with churn (30 s | 12 min): BUILD under valgrind, or as is'
	@echo '                 if ASan (make check-asan first, then BUILD=build-asan)'
	@echo 'make distcheck   release tarball check'
	@echo 'make install DESTDIR=...'
	@echo 'make uninstall DESTDIR=...   (an edited irqsteer.conf stays)'
	@echo 'Variables: BUILD=dir CONFIGURE_FLAGS=... RUN_ARGS=... LIVE=1'

# Fails with the command that installs what is missing: $(1) the programs,
# $(2) the tools/deps.sh step providing them.
define need
	@for t in $(1); do \
	  command -v $$t >/dev/null 2>&1 || { \
	    echo "irqsteer: '$$t' not found; install the dependencies first: sh tools/deps.sh $(2)" >&2; exit 1; }; \
	done
endef

deps-build deps-test deps-bench deps-fuzz:
	sh tools/deps.sh $(@:deps-%=%)

configure: configure.ac Makefile.am
	$(call need,autoreconf aclocal automake pkg-config,build)
	autoreconf -fi

CONFIGURE = cd $(BUILD) && ../configure --prefix=/usr --sysconfdir=/etc CFLAGS='$(CFLAGS)' $(CONFIGURE_FLAGS) || { \
	  echo "irqsteer: configure failed (see above); missing libraries are installed by: sh tools/deps.sh build" >&2; \
	  exit 1; }

$(BUILD)/Makefile: configure
	$(call need,cc pkg-config,build)
	mkdir -p $(BUILD)
	$(CONFIGURE)

run: all
	@echo "irqsteerd: running in the foreground with built-in defaults; Ctrl-C stops it and restores what it changed"
	$(BUILD)/irqsteerd --foreground $(RUN_ARGS)

# The live tests (tests/live-*.sh) change this host: they skip unless
# IRQSTEER_LIVE=1, which check-live and LIVE=1 set; check-live runs them
# alone.  tests/summary.sh counts what ran and names the skipped live tests.
LIVE_TESTS = $(shell cd tests && ls live-*.sh | grep -v '^live-host-lib.sh$$' | sed 's,^,tests/,')
LIVE_ENV = $(if $(LIVE),IRQSTEER_LIVE=1)

check: $(BUILD)/Makefile
	$(call need,python3,test)
	@pkg-config --exists cmocka || { \
	  echo "irqsteer: cmocka not found; install the test dependencies first: sh tools/deps.sh test" >&2; exit 1; }
	@# a build configured before cmocka was installed (make run first) has no unit tests
	@grep -q '^CMOCKA_LIBS = .*-lcmocka' $(BUILD)/Makefile || { \
	  echo "irqsteer: $(BUILD) was configured without cmocka: configuring it again"; $(CONFIGURE) }
	$(MAKE) -C $(BUILD) -j$(JOBS)
	$(MAKE) -C $(BUILD) -j$(JOBS) check TESTS=
	@rc=0; $(LIVE_ENV) $(MAKE) -C $(BUILD) check || rc=$$?; \
	sh tests/summary.sh $(BUILD); exit $$rc

check-live: $(BUILD)/Makefile
	$(call need,python3,test)
	$(MAKE) -C $(BUILD) -j$(JOBS)
	$(MAKE) -C $(BUILD) -j$(JOBS) check TESTS=
	@rc=0; IRQSTEER_LIVE=1 $(MAKE) -C $(BUILD) check TESTS='$(LIVE_TESTS)' || rc=$$?; \
	sh tests/summary.sh $(BUILD) '$(LIVE_TESTS)'; exit $$rc

# The same suite for memory and UB errors; what only times or measures
# (printed figures, the tick pace) is left to the plain pass.
check-asan:
	IRQSTEER_SANITIZER_PASS=1 $(MAKE) check BUILD=build-asan \
	  CFLAGS='-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all'

# The parsers of outside input under libFuzzer with ASan+UBSan (tests/README.md):
# clang, in a build dir of its own; a finding fails the target and is kept
# in $(FUZZ_BUILD)/tests/fuzz/findings.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS ?= -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=all
fuzz:
	$(call need,clang,fuzz)
	$(MAKE) $(FUZZ_BUILD)/Makefile BUILD=$(FUZZ_BUILD) CFLAGS='$(FUZZ_CFLAGS)' \
	  CONFIGURE_FLAGS='$(CONFIGURE_FLAGS) CC=clang'
	$(MAKE) -C $(FUZZ_BUILD) -j$(JOBS) fuzz-build
	$(MAKE) -C $(FUZZ_BUILD) fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

bench: all
	$(call need,python3 irqbalance,bench)
	$(MAKE) -C $(BUILD) bench

bench-quick: all
	$(call need,python3 irqbalance,bench)
	$(MAKE) -C $(BUILD) bench-quick

torture soak-quick soak: all
	$(call need,python3 valgrind,bench)
	$(MAKE) -C $(BUILD) $@

distcheck: $(BUILD)/Makefile
	$(MAKE) -C $(BUILD) distcheck

install: all
	$(MAKE) -C $(BUILD) install

# Removes what install put there; a configuration file that was edited
# stays (it differs from the example it was installed from).
.PHONY: uninstall
uninstall: $(BUILD)/Makefile
	$(MAKE) -C $(BUILD) uninstall

clean:
	rm -rf $(BUILD) build-asan build-fuzz

# The Debian package (debian/, dh compat 13): dpkg-buildpackage -us -uc -b,
# the .deb files then moved from the parent directory into $(DEB_OUT).
DEB_OUT ?= $(BUILD)-deb
.PHONY: deb
deb:
	@for t in dpkg-buildpackage:dpkg-dev dh:debhelper; do \
	  command -v $${t%%:*} >/dev/null 2>&1 || { echo "make deb: $${t%%:*} missing: apt-get install $${t#*:}" >&2; exit 1; }; \
	done
	dpkg-buildpackage -us -uc -b
	mkdir -p $(DEB_OUT)
	v=$$(dpkg-parsechangelog -S Version) && \
	  mv ../irqsteer_$${v}_*.deb ../irqsteer-dbgsym_$${v}_*.deb ../irqsteer_$${v}_*.buildinfo \
	    ../irqsteer_$${v}_*.changes $(DEB_OUT)/ 2>/dev/null; \
	  ls $(DEB_OUT)/irqsteer_$${v}_*.deb
