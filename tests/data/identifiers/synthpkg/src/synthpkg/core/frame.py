from synthpkg.core.base import Base, passthrough
from synthpkg.core.grouped import Grouped


class Frame(Base):
    def __init__(self, data=None, *, columns=None):
        self.data = data

    def group_by(self, key, *, sort=True):
        return Grouped()

    def window(self, size, closed="right"):
        return Grouped()

    def plot(self, kind="line", **style):
        return None

    @passthrough
    def reshaped(self, how="wide"):
        return self


def merge_near(left, right, *, on=None, tolerance=None):
    return Frame()
