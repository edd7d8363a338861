from typing import Self

class Base:
    def describe(self, percentiles: list[float] | None = ...) -> Self: ...
