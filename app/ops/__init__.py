"""Running Herald: metrics, health probes, the operations console, worker
heartbeats and faults, structured logs, leases and child processes."""
