# The agent, sluiced, built into build/bin/ (and into the guest's /usr/sbin).
# PKG_CFLAGS and PKG_LDFLAGS: the distribution's flags (packaging/debian/rules).
AGENT_DIR := $(ROOT)/agent
# The API's sources; the handlers are also linked into host tests (api.mk).
API_SRC := $(addprefix $(ROOT)/api/,server.c routes.c common.c admin.c volumes.c stats.c \
	problem.c policy_json.c auth.c idem.c metrics.c tokens.c exports.c volstatus.c)
# The agent's library: everything but the programs' main().
AGENT_LIB := $(addprefix $(AGENT_DIR)/,sluiced.c daemon.c config.c ops.c jobs.c state.c db.c \
	idmap.c dmctl.c model.c policy.c quotas.c pools.c label.c plan.c store.c extent.c monitor.c \
	nvmet.c exports.c dhchap.c ctrls.c) $(ROOT)/dmtarget/sluice-core.c
AGENT_SRC := $(AGENT_LIB) $(API_SRC) $(ROOT)/api/main.c
# the version /metrics reports (sluice_build_info): the package's
SLUICE_VERSION := $(shell sed -n '1s/.*(\(.*\)).*/\1/p' $(ROOT)/packaging/debian/changelog)
AGENT_LIBS := -ljansson -ldevmapper -lblkid -lmicrohttpd -lgnutls -luring -lsqlite3 -lpthread
AGENT_HDR := $(wildcard $(AGENT_DIR)/*.h) $(ROOT)/dmtarget/sluice-core.h $(wildcard $(ROOT)/api/*.h)
SLUICED := $(BUILD)/bin/sluiced

$(SLUICED): $(AGENT_SRC) $(AGENT_HDR)
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 $(PKG_CFLAGS) \
		-DSLUICE_VERSION='"$(SLUICE_VERSION)"' -o $@ $(AGENT_SRC) \
		$(PKG_LDFLAGS) $(AGENT_LIBS)

agent: deps
	@$(MAKE) --no-print-directory $(SLUICED) $(SLUICECTL) $(FUZZ_API) $(BLKOP) $(TRICKLE) $(LOAD) \
		$(TLSPROBE)

# A guest test tool: block operations busybox cannot issue (tests/vm/tools).
BLKOP := $(BUILD)/bin/sluice-blkop
$(BLKOP): $(ROOT)/tests/vm/tools/sluice-blkop.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -o $@ $<

# A guest test tool: slow clients that trickle request bytes (tests/vm/tools).
TRICKLE := $(BUILD)/bin/sluice-trickle
$(TRICKLE): $(ROOT)/tests/vm/tools/sluice-trickle.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -o $@ $<

# A guest test tool: which TLS versions and suites a server takes (tests/vm/tools).
TLSPROBE := $(BUILD)/bin/sluice-tlsprobe
$(TLSPROBE): $(ROOT)/tests/vm/tools/sluice-tlsprobe.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -o $@ $< -lgnutls

# A bench tool: API load over keep-alive connections (tests/vm/tools).
LOAD := $(BUILD)/bin/sluice-load
$(LOAD): $(ROOT)/tests/vm/tools/sluice-load.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -o $@ $< -lpthread

# The API's client.
SLUICECTL := $(BUILD)/bin/sluicectl
$(SLUICECTL): $(ROOT)/api/sluicectl.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 $(PKG_CFLAGS) -o $@ $< $(PKG_LDFLAGS) \
		-ljansson -lcurl-gnutls

# The API fuzzer, run in the guest against the real kernel (tests/vm/tests/api/002-fuzz).
FUZZ_API := $(BUILD)/bin/sluice-fuzz-api
FUZZ_API_SRC := $(AGENT_LIB) $(API_SRC) $(ROOT)/tests/unit/fuzz_api.c \
	$(ROOT)/tests/unit/fuzz_api_main.c
$(FUZZ_API): $(FUZZ_API_SRC) $(AGENT_HDR)
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -o $@ $(FUZZ_API_SRC) $(AGENT_LIBS)
