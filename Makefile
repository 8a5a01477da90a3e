# Herald: `make run` and `make test` set up whatever is missing, then act.
PY := .venv/bin/python
PYTEST_ARGS ?=

.PHONY: setup setup-dev setup-test run example example-adopt lint test-js test test-cluster test-fast bench bench-compare clean

setup:
	@bin/setup

setup-dev:
	@bin/setup --dev

setup-test:
	@bin/setup --browser --dev

run: setup
	@$(PY) bin/stack.py

example: setup
	@$(PY) bin/example.py

# Chirp (examples/adopt, the app docs/adopt.md builds) beside Herald: CHIRP_PORT (5002).
example-adopt: setup-dev
	@$(PY) bin/example_adopt.py

# ruff (pyproject.toml), then the browser client's unit tests in Node, then every Python
# test in two processes (a file's tests stay together; PYTEST_ARGS="-n 0" runs them in one),
# then again on a Redis Cluster (test-cluster).
test: setup-test lint test-js
	@$(PY) -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory test-cluster

# The same tests on a Redis Cluster (3 masters, 3 replicas, started by the tests on free
# ports: tests/redis_cluster.py): unit, delivery, replay, fault, worker and client tests.
# Not the browser's, Spark's, the fuzzers', the benchmarks' or the example host app's
# (it keeps its own data in database 1 of Herald's redis-server): what they add does not
# depend on the kind of Redis. tests/integration/cluster (a master killed) runs in both.
CLUSTER_TESTS := tests/unit tests/integration/realtime tests/integration/clients \
	tests/integration/workers tests/integration/webhooks tests/integration/digests \
	tests/integration/users tests/integration/web tests/integration/ops tests/integration/outbox \
	tests/integration/security tests/integration/test_stack.py
test-cluster: setup-test
	@HERALD_TEST_REDIS=cluster $(PY) -m pytest -n 2 --dist loadfile $(CLUSTER_TESTS) $(PYTEST_ARGS)

lint: setup-dev
	@.venv/bin/ruff check --quiet .

# clients/js/herald.js's unit tests, with Node's own test runner (no server, no browser).
test-js:
	@node --test clients/js/test/*.test.js

# Unit and API tests only (no browser, Spark, fuzzing, or servers of their own): seconds.
test-fast: setup-dev lint test-js
	@$(PY) -m pytest tests/unit -q $(PYTEST_ARGS)

bench: setup-test
	@$(PY) bench/browser_latency.py
	@$(PY) bench/browser_burst.py
	@$(PY) bench/edit_latency.py
	@$(PY) bench/outbox.py
	@$(PY) bench/adopt.py
	@$(PY) bench/abuse.py
	@$(PY) bench/churn.py
	@$(PY) bench/recovery.py
	@$(PY) bench/slow_client.py
	@$(PY) bench/storm.py
	@$(PY) bench/bridge.py
	@$(PY) bench/redis_ceiling.py
	@$(PY) bench/rest_publish.py
	@$(PY) bench/reconnect.py
	@$(PY) bench/idle_memory.py
	@$(PY) bench/spark_rollup.py
	@$(PY) bench/spark_cluster.py
	@$(PY) bench/search.py
	@$(PY) bench/webhooks.py
	@$(PY) bench/fanout.py --servers herald,herald2,per_connection,node --clients 1000 --rates 20,50,100,200,400,600,900 --idle 5000 --plot bench/fanout.png

# The hot path's figures on this tree and on REF, back to back, with their ratios
# (bin/bench_compare.py): make bench-compare REF=<the main you started from>.
bench-compare: setup-test
	@test -n "$(REF)" || { echo "make bench-compare REF=<git ref>"; exit 2; }
	@$(PY) bin/bench_compare.py --ref "$(REF)" $(BENCH_ARGS)

clean:
	rm -rf .venv node_modules .pytest_cache
