"""Histograms a web process keeps in memory and writes into its metrics snapshot:
how many notifications are fanned out together, and how late the relay is."""

BATCH_BUCKETS = (1, 2, 5, 10, 20, 50, 100)
LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)


class Histogram:
    """Fixed buckets counted in place (cumulative only when rendered)."""

    __slots__ = ("bounds", "counts", "total", "sum")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0
        self.sum = 0.0

    def observe(self, value):
        for index, bound in enumerate(self.bounds):  # noqa: B007 (used after the loop)
            if value <= bound:
                break
        else:
            index = len(self.bounds)
        self.counts[index] += 1
        self.total += 1
        self.sum += value

    def state(self):
        return {"counts": self.counts, "sum": self.sum}
