"""The Lark grammar of the wac language (`wac.lark`), shipped as package data."""
