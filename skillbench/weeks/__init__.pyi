from ._connect import (
    WeeksError as WeeksError,
    connect as connect,
    weekly_folder as weekly_folder,
)
from ._queries import (
    FAMILY_ARM_SQL as FAMILY_ARM_SQL,
    TWO_WEEKS_SQL as TWO_WEEKS_SQL,
    family_arm_summary as family_arm_summary,
    two_weeks as two_weeks,
)
