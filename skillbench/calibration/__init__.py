"""Judge calibration: agreement statistics, the calibration run, human labels, and its report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "krippendorff_reading",
        "landis_koch", "pabak", "pair_agreement", "multi_agreement", "self_agreement",
        "flipping_items", "agreement_rows", "UNANIMOUS_MUSTS_BAR"
    ), "agreement"),
    **dict.fromkeys((
        "Calibration", "CalibrationOptions", "calibrate", "calibration_current",
        "grade_repeats", "ledger_grades", "human_grades"
    ), "run"),
    **dict.fromkeys(("export_labels", "read_labels", "LabelsError",), "labels"),
    **dict.fromkeys(("render_markdown", "write_calibration",), "report"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.calibration.agreement import (
        UNANIMOUS_MUSTS_BAR,
        agreement_rows,
        cohen_kappa,
        fleiss_kappa,
        flipping_items,
        krippendorff_alpha,
        krippendorff_reading,
        landis_koch,
        multi_agreement,
        pabak,
        pair_agreement,
        self_agreement,
    )
    from skillbench.calibration.labels import (
        LabelsError,
        export_labels,
        read_labels,
    )
    from skillbench.calibration.report import (
        render_markdown,
        write_calibration,
    )
    from skillbench.calibration.run import (
        Calibration,
        CalibrationOptions,
        calibrate,
        calibration_current,
        grade_repeats,
        human_grades,
        ledger_grades,
    )
