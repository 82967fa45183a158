# Host unit tests, built twice (plain and ASan+UBSan), and the parser fuzzer
# (built with clang's libFuzzer, its corpus replayed by `make test`).
UNIT_DIR := $(ROOT)/tests/unit
UNIT_SRCS := $(wildcard $(UNIT_DIR)/test_*.c)
UNIT_NAMES := $(patsubst $(UNIT_DIR)/test_%.c,%,$(UNIT_SRCS))
# The code under test: the kernel's portable parts and the agent's libraries.
UNIT_CORE := $(ROOT)/dmtarget/sluice-core.c
UNIT_SRC := $(ROOT)/dmtarget/sluice-sched.c $(ROOT)/dmtarget/sluice-depth.c \
	$(ROOT)/dmtarget/sluice-think.c $(AGENT_LIB) $(ROOT)/api/policy_json.c \
	$(ROOT)/api/volstatus.c
UNIT_LDLIBS := -lm $(AGENT_LIBS)
# test_api runs the API's handlers over the agent's operations
UNIT_API_SRC = $(filter-out $(ROOT)/api/server.c $(ROOT)/api/policy_json.c \
	$(ROOT)/api/volstatus.c,$(API_SRC)) $(UNIT_DIR)/fuzz_api.c
CFLAGS_USER := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

UNIT_PLAIN := $(patsubst %,$(BUILD)/unit/plain/test_%,$(UNIT_NAMES))
UNIT_ASAN := $(patsubst %,$(BUILD)/unit/asan/test_%,$(UNIT_NAMES))
# the tests whose code runs on several threads, also under ThreadSanitizer
UNIT_TSAN := $(BUILD)/unit/tsan/test_api $(BUILD)/unit/tsan/test_db
FUZZ_PARSE := $(BUILD)/fuzz/fuzz_parse

# Each source is compiled once per variant, into build/unit/<variant>/obj/
# (its path under the tree), and the tests are linked from those objects:
# compiling every source again into each of the forty-odd binaries took six
# minutes of make test's twenty-five.
UNIT_OBJ_SRCS := $(UNIT_DIR)/unit.c $(UNIT_SRC)
unit_objs = $(patsubst $(ROOT)/%.c,$(BUILD)/unit/$(1)/obj/%.o,$(2))
UNIT_HDRS := $(wildcard $(UNIT_DIR)/*.h $(ROOT)/agent/*.h $(ROOT)/api/*.h $(ROOT)/dmtarget/*.h)
UNIT_CFLAGS_plain := -O2
UNIT_CFLAGS_asan := -O1 $(SAN)
UNIT_CFLAGS_tsan := -O1 -fsanitize=thread

define unit_variant
$(BUILD)/unit/$(1)/obj/%.o: $(ROOT)/%.c $(UNIT_HDRS)
	@mkdir -p $$(@D)
	$(CC) $(CFLAGS_USER) $(UNIT_CFLAGS_$(1)) -c -o $$@ $$<

$(BUILD)/unit/$(1)/test_%: $(BUILD)/unit/$(1)/obj/tests/unit/test_%.o $(call unit_objs,$(1),$(UNIT_OBJ_SRCS))
	$(CC) $(CFLAGS_USER) $(UNIT_CFLAGS_$(1)) -o $$@ $$^ $(UNIT_LDLIBS)

# test_api runs the API's handlers too
$(BUILD)/unit/$(1)/test_api: $(call unit_objs,$(1),$(UNIT_API_SRC))
endef
$(foreach v,plain asan tsan,$(eval $(call unit_variant,$(v))))
# kept, though only a pattern names them, so that a rebuild links only
.SECONDARY: $(foreach v,plain asan tsan,$(patsubst %,$(BUILD)/unit/$(v)/obj/tests/unit/test_%.o,$(UNIT_NAMES)))

$(FUZZ_PARSE): $(UNIT_DIR)/fuzz_parse.c $(UNIT_CORE) $(ROOT)/dmtarget/sluice-core.h
	@mkdir -p $(@D)
	clang -g -O1 -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined -o $@ $< $(UNIT_CORE)

unit-build: $(UNIT_PLAIN) $(UNIT_ASAN) $(UNIT_TSAN) $(FUZZ_PARSE)

test-unit: deps
	@mkdir -p $(BUILD); rm -f $(BUILD)/unit.counts
	@$(MAKE) --no-print-directory -j$$(nproc) unit-build > $(BUILD)/unit-build.log 2>&1 || \
		{ cat $(BUILD)/unit-build.log; exit 1; }
	@$(UNIT_DIR)/run.sh $(BUILD)/unit.counts $(UNIT_PLAIN) $(UNIT_ASAN) $(UNIT_TSAN) -- $(FUZZ_PARSE) $(UNIT_DIR)/corpus/parse

FUZZ_TIME ?= 300
fuzz: $(FUZZ_PARSE)
	@mkdir -p $(BUILD)/fuzz/corpus
	$(FUZZ_PARSE) -max_total_time=$(FUZZ_TIME) $(BUILD)/fuzz/corpus $(UNIT_DIR)/corpus/parse
