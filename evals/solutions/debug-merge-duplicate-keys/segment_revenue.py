"""Revenue by customer segment for the monthly board pack."""

import pandas as pd


def revenue_by_segment(orders_path="data/orders.csv", customers_path="data/customers.csv"):
    """Total order amount per customer segment (each customer's current segment)."""
    orders = pd.read_csv(orders_path)
    customers = pd.read_csv(customers_path, parse_dates=["updated_at"])
    # customers.csv keeps one row per segment change: keep each customer's latest row only.
    current = customers.sort_values("updated_at").drop_duplicates("customer_id", keep="last")
    # many orders per customer, at most one customer row per order: raise MergeError otherwise
    joined = orders.merge(current[["customer_id", "segment"]], on="customer_id", how="left",
                          validate="many_to_one")
    assert len(joined) == len(orders)
    return joined.groupby("segment")["amount"].sum().sort_index()


if __name__ == "__main__":
    print(revenue_by_segment().round(2).to_string())
