from ._grade import (
    CheckResult as CheckResult,
    grade_check as grade_check,
    grade_checks as grade_checks,
    run_facts as run_facts,
)
from ._ledger import (
    checks_rows as checks_rows,
    read_run_checks as read_run_checks,
    write_checks_ledger as write_checks_ledger,
    write_run_checks as write_run_checks,
)
from ._table import (
    check_types_table as check_types_table,
)
