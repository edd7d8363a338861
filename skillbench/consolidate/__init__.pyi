from .problems import (
    ConsolidationRefused as ConsolidationRefused,
    OutputRefused as OutputRefused,
    Problem as Problem,
)
from .run import (
    ConsolidationResult as ConsolidationResult,
    consolidate as consolidate,
)
