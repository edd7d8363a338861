from synthpkg.core.frame import Frame as Frame, merge_near as merge_near
from synthpkg.core.grouped import Grouped as Grouped

def read_table(path: str, *, sep: str = ..., header: bool = ...) -> Frame: ...
