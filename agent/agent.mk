# The agent, sluiced, built into build/bin/ (and into the guest's /usr/sbin).
AGENT_DIR := $(ROOT)/agent
AGENT_SRC := $(AGENT_DIR)/sluiced.c $(AGENT_DIR)/ops.c $(AGENT_DIR)/dmctl.c $(AGENT_DIR)/model.c \
	$(AGENT_DIR)/plan.c $(AGENT_DIR)/store.c $(AGENT_DIR)/extent.c $(ROOT)/dmtarget/sluice-core.c
AGENT_HDR := $(wildcard $(AGENT_DIR)/*.h) $(ROOT)/dmtarget/sluice-core.h
SLUICED := $(BUILD)/bin/sluiced

$(SLUICED): $(AGENT_SRC) $(AGENT_HDR)
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -o $@ $(AGENT_SRC) -ljansson -ldevmapper -lblkid

agent: deps
	@$(MAKE) --no-print-directory $(SLUICED)
