/**
 * The {@code bin/comlrl} commands (init-model, generate, train, bench, report). The only package that prints for humans or exits.
 */
package comlrl.cli;
