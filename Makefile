# The two set-up commands of the README. Each installs what it needs, then runs.
PYTHON ?= python3

.PHONY: demo test install

install:
	$(PYTHON) -m pip install -q -e '.[test]'

demo: install
	cardtable demo

test: install
	@command -v chromium >/dev/null 2>&1 || (apt-get install -y -q chromium >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null))
	$(PYTHON) -m ruff check protocol_runner vision tests
	$(PYTHON) -m pytest -q
