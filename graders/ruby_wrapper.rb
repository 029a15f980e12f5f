# frozen_string_literal: true

# Runs one method of a Ruby script for a `ruby` assertion: loads the script, calls the
# method (or `ClassName.method`) with the JSON arguments, writes the JSON result.
# Usage: ruby ruby_wrapper.rb SCRIPT METHOD ARGS_JSON_FILE OUTPUT_JSON_FILE
require 'json'

script_path, method_name, json_path, output_path = ARGV
$LOAD_PATH.unshift(File.dirname(File.absolute_path(script_path)))
load script_path
args = JSON.parse(File.read(json_path, encoding: 'utf-8'))
result =
  if method_name.include?('.')
    class_name, name = method_name.split('.', 2)
    Object.const_get(class_name).public_send(name, *args)
  else
    send(method_name, *args)
  end
File.write(output_path, JSON.generate({ type: 'final_result', data: result }), encoding: 'utf-8')
