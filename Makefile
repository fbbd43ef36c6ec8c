# Thin driver over the autotools build: it installs missing Debian build
# packages, bootstraps configure, and builds out of tree in $(BUILD) so the
# generated Makefile never overwrites this one.  Run `make help`.
# It configures for a system daemon (--prefix=/usr --sysconfdir=/etc, so
# the configuration is /etc/irqsteer/irqsteer.conf); CONFIGURE_FLAGS adds to
# or overrides that.

BUILD ?= build
CONFIGURE_FLAGS ?=
RUN_ARGS ?=
CFLAGS ?= -g -O2

BUILD_PKGS := gcc make autoconf automake pkg-config libnl-3-dev \
	libnl-route-3-dev libnl-genl-3-dev libsystemd-dev libcap-dev
TEST_PKGS := $(BUILD_PKGS) libcmocka-dev mandoc iproute2 iperf3 procps python3 ethtool \
	debootstrap systemd-container xz-utils prometheus-node-exporter prometheus curl
BENCH_PKGS := $(TEST_PKGS) irqbalance valgrind gnuplot-nox util-linux nftables

.PHONY: all run check check-asan fuzz bench bench-quick torture soak-quick soak distcheck install clean \
	help deps-build deps-test deps-bench

# Compiling runs on every CPU; the tests run one at a time (the live ones
# share the host's IRQs and namespaces).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

all: deps-build $(BUILD)/Makefile
	$(MAKE) -C $(BUILD) -j$(JOBS)

help:
	@echo 'make run     build, then run irqsteerd in the foreground on this host'
	@echo 'make check   build, then run the whole test suite'
	@echo 'make check-asan  the test suite built with ASan+UBSan (BUILD=build-asan)'
	@echo 'make fuzz    libFuzzer harnesses (clang, BUILD=build-fuzz), FUZZ_SECONDS each'
	@echo 'make bench | bench-quick   simulator benchmarks against irqbalance'
	@echo 'make torture     SIGKILL and fault torture on simulator trees (~100 s, root)'
	@echo 'make soak-quick | soak   soak with churn (30 s | 12 min): BUILD under valgrind, or as is'
	@echo '                 if ASan (make check-asan first, then BUILD=build-asan)'
	@echo 'make distcheck   release tarball check'
	@echo 'make install DESTDIR=...'
	@echo 'make uninstall DESTDIR=...   (an edited irqsteer.conf stays)'
	@echo 'Variables: BUILD=dir CONFIGURE_FLAGS=... RUN_ARGS=...'

# Installs whatever of the named Debian packages is missing, saying what.
define install_missing
	@missing=; \
	if command -v dpkg-query >/dev/null 2>&1; then \
	  for p in $(1); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	  done; \
	else echo 'deps: not a Debian system, not checking packages'; fi; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "deps: need root to install:$$missing" >&2; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing || exit 1; \
	fi
endef

deps-build:
	$(call install_missing,$(BUILD_PKGS))
deps-test:
	$(call install_missing,$(TEST_PKGS))
deps-bench:
	$(call install_missing,$(BENCH_PKGS))

configure: configure.ac Makefile.am
	autoreconf -fi

$(BUILD)/Makefile: configure
	mkdir -p $(BUILD)
	cd $(BUILD) && ../configure --prefix=/usr --sysconfdir=/etc CFLAGS='$(CFLAGS)' $(CONFIGURE_FLAGS)

run: all
	@echo "irqsteerd: running in the foreground with built-in defaults; Ctrl-C stops it and restores what it changed"
	$(BUILD)/irqsteerd --foreground $(RUN_ARGS)

check: deps-test $(BUILD)/Makefile
	$(MAKE) -C $(BUILD) -j$(JOBS)
	$(MAKE) -C $(BUILD) -j$(JOBS) check TESTS=
	@rc=0; $(MAKE) -C $(BUILD) check || rc=$$?; \
	sh tests/summary.sh $(BUILD); exit $$rc

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
fuzz: deps-build
	$(call install_missing,clang libclang-rt-14-dev)
	$(MAKE) $(FUZZ_BUILD)/Makefile BUILD=$(FUZZ_BUILD) CFLAGS='$(FUZZ_CFLAGS)' \
	  CONFIGURE_FLAGS='$(CONFIGURE_FLAGS) CC=clang'
	$(MAKE) -C $(FUZZ_BUILD) -j$(JOBS) fuzz-build
	$(MAKE) -C $(FUZZ_BUILD) fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

bench: deps-bench all
	$(call install_missing,python3)
	$(MAKE) -C $(BUILD) bench

bench-quick: deps-bench all
	$(call install_missing,python3)
	$(MAKE) -C $(BUILD) bench-quick

torture soak-quick soak: deps-test all
	$(call install_missing,python3 valgrind util-linux)
	$(MAKE) -C $(BUILD) $@

distcheck: deps-test $(BUILD)/Makefile
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
