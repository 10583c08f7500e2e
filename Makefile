# putmd — the two entry points a new machine needs:
#   make run    builds putmd and runs the default input: 1 ps of water (examples/water-spce-3k)
#   make test   installs what the build needs, builds, and runs the test suite
# Everything else (build/, deps) is a step of those two.

BUILD    ?= build
JOBS     ?= 2
EXAMPLE  ?= examples/water-spce-3k
DEB_DEPS := build-essential cmake pkg-config libfftw3-dev libopenmpi-dev openmpi-bin \
            nlohmann-json3-dev libfmt-dev libgtest-dev gromacs-data \
            gromacs python3-mdanalysis python3-mdtraj python3-pandas clang \
            python3-matplotlib python3-jsonschema libhwy-dev \
            iproute2 procps util-linux libsimgrid-dev

.PHONY: all deps configure build test run clean

all: build

# Install missing Debian packages (root or sudo); a no-op when all are there.
deps:
	@missing=""; for p in $(DEB_DEPS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: configure
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest -j$(JOBS) --output-on-failure

# builds the putmd program alone (not the tests): the first step is reached
# in about 2 minutes on a fresh clone with 2 cores
run: configure
	cmake --build $(BUILD) --target putmd -j$(JOBS)
	$(BUILD)/bin/putmd run -p $(EXAMPLE)/topol.top -c $(EXAMPLE)/conf.gro -f $(EXAMPLE)/md.mdp -deffnm $(BUILD)/example-md
	@tail -1 $(BUILD)/example-md.log

clean:
	rm -rf $(BUILD)
