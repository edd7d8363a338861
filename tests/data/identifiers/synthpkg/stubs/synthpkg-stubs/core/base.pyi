from typing_extensions import Self

class Base:
    def describe(self, percentiles: list[float] | None = ...) -> Self: ...
