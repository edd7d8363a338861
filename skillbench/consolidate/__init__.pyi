from ._problems import (
    ConsolidationRefused as ConsolidationRefused,
    OutputRefused as OutputRefused,
    Problem as Problem,
)
from ._report import report_lines as report_lines
from ._run import (
    ConsolidationResult as ConsolidationResult,
    consolidate as consolidate,
)
