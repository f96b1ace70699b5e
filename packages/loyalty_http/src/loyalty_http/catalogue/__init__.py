"""HTTP layer of the product catalogue: products, batch upsert and product-to-reward."""
