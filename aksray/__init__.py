"""aksray: plan, render and check an aks-ray-platform stack offline."""
