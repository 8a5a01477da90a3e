"""bin/example.py picks the ports it needs itself when the defaults are taken:
each chosen port stays held until every choice is made, so two settings (the
web port and a bridge endpoint, say) never get the same one."""
import contextlib
import importlib.util
import socket

from tests.support import ROOT


def _example():
    spec = importlib.util.spec_from_file_location("herald_bin_example", ROOT / "bin" / "example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ports_chosen_together_are_distinct_and_held_until_all_are_chosen():
    example = _example()
    with contextlib.ExitStack() as held:
        chosen = [example.any_free_port("127.0.0.1", held) for _ in range(20)]
        assert len(set(chosen)) == len(chosen)
        for port in chosen:  # nobody else can take one before the stack binds it
            with socket.socket() as other, contextlib.suppress(OSError):
                other.bind(("127.0.0.1", port))
                raise AssertionError(f"port {port} was chosen but not held")
    with socket.socket() as after:  # released once the choosing is done
        after.bind(("127.0.0.1", chosen[0]))
