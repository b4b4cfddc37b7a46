"""Tables, plots and theory overlays from lbemu's tidy result frames."""
