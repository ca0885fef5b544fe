/**
 * The {@code bin/comlrl} commands (init-model, generate, train, bench, report, launch). The only package that prints for humans or exits.
 */
package comlrl.cli;
