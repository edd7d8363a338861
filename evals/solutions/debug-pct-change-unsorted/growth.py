"""Month-over-month revenue growth per plan, for the pricing review."""

import pandas as pd


def add_mom_growth(path="data/plan_revenue.csv"):
    """The revenue table with a mom_growth column: change on the plan's previous month, as a fraction."""
    # pct_change compares each row with the previous row of its group, so rows must be in month order
    # first (the export is not sorted; zero-padded YYYY-MM strings sort chronologically).
    df = pd.read_csv(path).sort_values(["plan", "month"], ignore_index=True)
    df["mom_growth"] = df.groupby("plan")["revenue"].pct_change()
    return df


def growth_in(month, path="data/plan_revenue.csv"):
    """Each plan's month-over-month growth in ``month`` ('YYYY-MM')."""
    df = add_mom_growth(path)
    return df.loc[df["month"] == month].set_index("plan")["mom_growth"].sort_index()


if __name__ == "__main__":
    print(growth_in("2026-06").map("{:+.1%}".format).to_string())
